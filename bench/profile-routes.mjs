#!/usr/bin/env node
/**
 * Node's CPU per request of list routes, and a CPU profile of each, scenario by scenario (issue 22, brief 22n).
 * Starts a build's server on a database as `npm run bench` does (production, warn logs, no rate limit, the ceiling
 * route), drives each scenario with the bench's own request generators in a closed loop (the same client for every
 * scenario, unlike the bench, which drives `ceiling` and `list` with autocannon), and reads the server's CPU time
 * (/proc) over the measured seconds. With `--profile DIR`, V8's profiler (through the inspector) records each
 * measured run alone: `DIR/<scenario>.cpuprofile`, summed by bench/cpu-profile-summary.mjs.
 *
 *   node bench/profile-routes.mjs --database bench1m_n [--dist /work/wt-before/dist]
 *        [--only ceiling,list,list-filters,proximity-random,q-words] [--seconds 8] [--warmup 2] [--connections 10]
 *        [--rate 300] [--rounds 1] [--profile bench/tmp/profiles-n]
 *
 * `--rate`: at most this many requests per second in all (paced per connection), so that scenarios are compared at
 * one rate: Node's CPU per request depends on how many requests each turn of the event loop serves together.
 * Prints, per scenario and round, req/s and node CPU-ms per request, and above the ceiling of the same round.
 * `--floor`: also the bare `node:http` + `pg` server of bench/node-floor.mjs on 200 captured requests of each
 * scenario (their statements as the app sent them), driven by autocannon, above its own bare ceiling: the least Node
 * can spend on that scenario's SQL and rows.
 * Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startFloorServer } from './node-floor.mjs';
import { cpuMs } from './proc-cpu.mjs';
import { listParamGenerators, pageOf } from './realistic-requests.mjs';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    dist: { type: 'string' },
    only: { type: 'string', default: 'ceiling,list,list-filters,proximity-random,q-words' },
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    rate: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    profile: { type: 'string' },
    floor: { type: 'boolean', default: false },
    preload: { type: 'string' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
if (!values.database) throw new Error('--database NAME is required');
const dist = values.dist ?? new URL('../dist', import.meta.url).pathname;
const API = '/api/v1';
const url = new URL(values.server);
url.pathname = `/${values.database}`;

// The bench's `q-words` words, read from scripts/bench.mjs (one list for both).
const benchText = readFileSync(new URL('../scripts/bench.mjs', import.meta.url), 'utf8');
const Q_WORDS = new Function(`return ${/const Q_WORDS = (\[[\s\S]*?\n\]);/.exec(benchText)[1]}`)();

const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
const fragments = (
  await client.query(
    `SELECT left(postal_code, 4) AS fragment FROM libraries
     WHERE status = 'approved' AND postal_code ~ '^[0-9]{5}$' ORDER BY random() LIMIT 200`,
  )
).rows.map((row) => row.fragment);
await client.end();
const { SEED_CITIES } = await import(`${dist}/src/cli/commands/seed-data.js`);
const lists = listParamGenerators(SEED_CITIES, fragments);
const pick = (items) => items[Math.floor(Math.random() * items.length)];
const query = (params) =>
  `${API}/libraries/?${Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&')}`;
const scenarios = {
  ceiling: () => `${API}/bench/ceiling`,
  list: () => `${API}/libraries/`,
  'list-filters': () => query(lists['list-filters']()),
  'proximity-random': () => query(lists['proximity-random']()),
  'q-words': () => query({ q: pick(Q_WORDS), ...pageOf() }),
};
const only = values.only.split(',');
for (const name of only) if (!scenarios[name]) throw new Error(`unknown scenario ${name}`);

// The server, as scripts/bench.mjs starts it.
const temp = mkdtempSync(join(tmpdir(), 'profile-routes-'));
const port = 20000 + Math.floor(Math.random() * 20000);
const serverArgs = values.profile ? ['--inspect=127.0.0.1:0'] : [];
if (values.preload) serverArgs.push('--import', values.preload);
const server = spawn(process.execPath, [...serverArgs, join(dist, 'src/main.js')], {
  cwd: dirname(dist),
  env: {
    // eslint-disable-next-line no-restricted-syntax -- the child's search path, as scripts/bench.mjs passes it
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: url.toString(),
    JWT_SECRET: randomBytes(48).toString('base64url'),
    RATE_LIMIT_ENABLED: 'false',
    DATA_DIR: join(temp, 'data'),
    MEDIA_ROOT: join(temp, 'media'),
    BENCH_CEILING_ROUTE: 'true',
    EXPORT_INTERVAL: 'off',
    MALLOC_ARENA_MAX: '2',
    PORT: String(port),
    HOST: '127.0.0.1',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let inspectorUrl = null;
let output = '';
server.stdout.on('data', (chunk) => (output += chunk));
server.stderr.on('data', (chunk) => {
  output += chunk;
  inspectorUrl ??= /ws:\/\/\S+/.exec(output)?.[0] ?? null;
});
const stop = () => {
  server.kill('SIGTERM');
  rmSync(temp, { recursive: true, force: true });
};
process.on('exit', stop);
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i += 1) {
  if (server.exitCode !== null) throw new Error(`server exited:\n${output}`);
  try {
    if ((await globalThis.fetch(`${base}/ready`)).ok) break;
  } catch {
    // not listening yet
  }
  if (i > 600) throw new Error(`server not ready:\n${output}`);
  await sleep(100);
}

/** The inspector's Profiler, over the server's WebSocket. */
async function inspector() {
  const socket = new globalThis.WebSocket(inspectorUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  const pending = new Map();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.id !== undefined) pending.get(message.id)?.(message);
  };
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      id += 1;
      pending.set(id, (message) =>
        message.error ? reject(new Error(message.error.message)) : resolve(message.result),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 100 });
  return { call, close: () => socket.close() };
}
const profiler = values.profile ? await inspector() : null;
if (values.profile) mkdirSync(values.profile, { recursive: true });

/** A closed loop of `connections` keep-alive workers (paced to `rate` in all when given) for `seconds`. */
async function drive(next, seconds) {
  const connections = Number(values.connections);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const end = performance.now() + seconds * 1000;
  const gap = values.rate ? (1000 * connections) / Number(values.rate) : 0;
  const counts = { ok: 0, other: 0 };
  const worker = async (index) => {
    let due = performance.now() + (gap * index) / connections;
    while (performance.now() < end) {
      if (gap) {
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        due += gap;
      }
      const status = await new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: next(), agent }, (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve(res.statusCode));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      if (status >= 200 && status < 300) counts.ok += 1;
      else counts.other += 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, i) => worker(i)));
  agent.destroy();
  return counts;
}

/** The statements of `count` requests of a scenario as the app sent them (the bench's /bench/capture). */
async function capture(next, count) {
  const groups = [];
  for (let i = 0; i < count; i += 1) {
    await globalThis.fetch(`${base}${API}/bench/capture`, { method: 'POST' });
    await (await globalThis.fetch(`${base}${next()}`)).arrayBuffer();
    const { items } = await (await globalThis.fetch(`${base}${API}/bench/capture`)).json();
    if (items.length) groups.push(items);
  }
  return groups;
}
const floor = values.floor ? await startFloorServer({ url: url.toString() }) : null;
const floorSettings = {
  connections: Number(values.connections),
  seconds: Number(values.seconds),
  warmup: Number(values.warmup),
};

/** The preload's counters (a preload that prints `data-events {json}` on SIGUSR2, e.g. counting socket reads). */
async function preloadCounts() {
  const from = output.length;
  server.kill('SIGUSR2');
  for (let i = 0; i < 50 && !output.slice(from).includes('\n'); i += 1) await sleep(20);
  const line = /data-events (\{.*\})/.exec(output.slice(from));
  return line ? JSON.parse(line[1]) : null;
}

const results = [];
for (let round = 1; round <= Number(values.rounds); round += 1) {
  const row = {};
  for (const name of only) {
    await drive(scenarios[name], Number(values.warmup));
    if (profiler) await profiler.call('Profiler.start');
    const eventsBefore = values.preload ? await preloadCounts() : null;
    const cpuBefore = cpuMs(server.pid);
    const started = performance.now();
    const counts = await drive(scenarios[name], Number(values.seconds));
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuMs(server.pid) - cpuBefore;
    if (profiler) {
      const { profile } = await profiler.call('Profiler.stop');
      writeFileSync(join(values.profile, `${name}.cpuprofile`), JSON.stringify(profile));
      writeFileSync(join(values.profile, `${name}.requests`), String(counts.ok + counts.other));
    }
    const perRequest = cpu / (counts.ok + counts.other);
    if (eventsBefore) {
      const after = await preloadCounts();
      const n = counts.ok + counts.other;
      console.log(
        `  ${name}: per request ${((after.pg - eventsBefore.pg) / n).toFixed(2)} pg socket reads (${((after.pgBytes - eventsBefore.pgBytes) / n).toFixed(0)} bytes), ${((after.http - eventsBefore.http) / n).toFixed(2)} http reads`,
      );
    }
    row[name] = perRequest;
    const above =
      row.ceiling === undefined ? '' : `  above ceiling ${(perRequest - row.ceiling).toFixed(3)}`;
    console.log(
      `round ${round} ${name.padEnd(17)} ${(counts.ok / seconds).toFixed(0).padStart(6)} req/s  ${counts.other} non-2xx  node ${perRequest.toFixed(3)} CPU-ms/req${above}`,
    );
    if (floor && name !== 'ceiling') {
      await floor.setScenario(name, await capture(scenarios[name], 200));
      const bare = await floor.measure('/ceiling', floorSettings);
      const route = await floor.measure(`/s/${name}`, floorSettings);
      row[`floor ${name}`] = route.cpu - bare.cpu;
      console.log(
        `round ${round} ${`floor ${name}`.padEnd(17)} ${route.rps.toFixed(0).padStart(6)} req/s  node ${route.cpu.toFixed(3)} CPU-ms/req  above its bare ceiling (${bare.cpu.toFixed(3)}) ${(route.cpu - bare.cpu).toFixed(3)}`,
      );
    }
  }
  results.push(row);
}
profiler?.close();
floor?.stop();
if (Number(values.rounds) > 1) {
  const median = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  for (const name of Object.keys(results[0]))
    console.log(
      `median ${name.padEnd(17)} node ${median(results.map((r) => r[name])).toFixed(3)}` +
        (results[0].ceiling === undefined || name.startsWith('floor ')
          ? ''
          : `  above ceiling ${median(results.map((r) => r[name] - r.ceiling)).toFixed(3)}`),
    );
}
stop();
process.exit(0);
