// CPU time and memory of processes, and the machine's busy and steal time, from /proc (Linux only). The one /proc
// reader of the benchmarks: scripts/bench.mjs, bench/node-floor.mjs, bench/map-cpu.mjs and bench/map-classes.mjs.
// Hand-written: no maintained package reads per-process utime/stime and PostgreSQL's process titles (pidusage
// spawns `ps` on some platforms and reports percentages, not cumulative CPU time).
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

const TICK_MS = 10; // USER_HZ = 100 on Linux

/**
 * utime+stime of a `/proc/<pid>/stat` text in ms, or, with `children`, cutime+cstime (what it reaped from its
 * exited children). The command name (field 2) may hold spaces and parentheses, hence the last `)`.
 */
function statCpuMs(stat, children) {
  // fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = children
    ? Number(fields[13]) + Number(fields[14])
    : Number(fields[11]) + Number(fields[12]);
  return ticks * TICK_MS;
}

/** User + system CPU time of a process so far, in ms (0 once it has exited). */
export function cpuMs(pid) {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'), false);
  } catch {
    return 0;
  }
}

/** The same without blocking, or its reaped children's (`children`); null when /proc is not readable. */
export async function processCpuMs(pid, children = false) {
  try {
    return statCpuMs(await readFile(`/proc/${pid}/stat`, 'utf8'), children);
  } catch {
    return null;
  }
}

/** Resident set size (VmRSS) of a process in bytes; null when /proc is not readable. */
export async function rssBytes(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Machine-wide busy and steal time (ms, all CPUs) from /proc/stat; null when not readable. */
export async function machineCpu() {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0];
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return {
      busy: (user + nice + system + irq + softirq) * TICK_MS,
      steal: steal * TICK_MS,
      total: (user + nice + system + idle + iowait + irq + softirq + steal) * TICK_MS,
    };
  } catch {
    return null;
  }
}

/** Whether a process title (`/proc/<pid>/cmdline`) is a PostgreSQL backend connected to `database`. */
const servesDatabase = (cmdline, database) =>
  cmdline.startsWith('postgres: ') && cmdline.includes(` ${database} `);

/** The pids of the PostgreSQL backends connected to `database`. */
export function databaseBackends(database) {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return servesDatabase(readFileSync(`/proc/${entry}/cmdline`, 'utf8'), database);
      } catch {
        return false;
      }
    });
}

/**
 * CPU of a database's PostgreSQL backends over a window, by sampling /proc every `intervalMs` (issue 22): each
 * backend's CPU when the window ends (or when last seen, for one that exited: at most one interval of it is lost)
 * minus its CPU when the window started (0 for one born inside it), plus parallel workers of those backends
 * ("parallel worker for PID n"). It does not add the postmaster's reaped children, which on a shared server include
 * every other database's exited connections and workers. `stop()` resolves to the total in ms (null when no backend
 * was ever seen).
 */
export function samplePostgresCpu(database, intervalMs = 200) {
  const first = new Map();
  const last = new Map();
  let initial = null;
  let stopped = false;
  const scan = async () => {
    const seen = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let cmdline;
      try {
        cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (!cmdline.startsWith('postgres: ')) continue;
      const leader = /parallel worker for PID (\d+)/.exec(cmdline)?.[1];
      if (servesDatabase(cmdline, database) || (leader && last.has(leader))) seen.push(entry);
    }
    for (const pid of seen) {
      const cpu = await processCpuMs(pid);
      if (cpu === null) continue;
      if (!first.has(pid)) first.set(pid, initial === null || initial.has(pid) ? cpu : 0);
      last.set(pid, cpu);
    }
    return seen;
  };
  const loop = (async () => {
    initial = new Set(await scan());
    while (!stopped) {
      await sleep(intervalMs);
      await scan();
    }
    await scan();
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? cpu);
      return last.size ? total : null;
    },
  };
}
