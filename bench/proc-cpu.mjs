// CPU time of processes from /proc (Linux only), for bench/map-cpu.mjs and bench/map-classes.mjs.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** User + system CPU time of a process so far, in ms (0 once it has exited). */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The pids of the PostgreSQL backends connected to `database`. */
export function databaseBackends(database) {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
        return cmdline.startsWith('postgres: ') && cmdline.includes(` ${database} `);
      } catch {
        return false;
      }
    });
}
