#!/usr/bin/env node
/**
 * `npm run bench -- --embedded` (issue 16): the embedded default as a new user meets it. In a fresh DATA_DIR:
 *   1. `npm start` (first start: initdb, migrations) until /ready;
 *   2. idle RSS of the API process and of the embedded database worker, empty database;
 *   3. a restart through `npm start` (dist/ up to date, so no build) and its time to /ready;
 *   4. `npm run cli -- seed --libraries N` (default 10,000) next to the running server, a few reads of every kind
 *      (list, proximity, text search, detail, statistics), then the idle RSS again.
 * RSS is VmRSS (and RssAnon, the process's own memory) from /proc after 5 s without requests. Figures on a shared
 * machine vary with the other work on it; memory much less than time.
 *
 *   npm run bench -- --embedded [--libraries 10000] [--keep]
 */
/* global fetch */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { freePort } from './free-port.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    embedded: { type: 'boolean', default: true },
    libraries: { type: 'string', default: '10000' },
    keep: { type: 'boolean', default: false },
  },
});
const libraries = Number(args.libraries);
if (!Number.isInteger(libraries) || libraries < 1) {
  process.stderr.write('bench --embedded: --libraries must be a positive integer\n');
  process.exit(2);
}
const log = (text) => process.stdout.write(`${text}\n`);
const mb = (kb) => (kb === null ? 'n/a' : `${Math.round(kb / 1024)} MB`);

/** VmRSS and RssAnon of a process, in kB. */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return { rss: field('VmRSS'), anon: field('RssAnon') };
  } catch {
    return { rss: null, anon: null };
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'bookcase-bench-embedded-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
// The caller's environment minus what would point the app elsewhere (a DATABASE_URL would skip the embedded one).
const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };
for (const key of ['DATABASE_URL', 'REDIS_URL', 'MEDIA_ROOT', 'NODE_ENV', 'JWT_SECRET'])
  delete env[key];
env.LOG_LEVEL = 'warn';

let server = null;
let output = '';
function start() {
  output = '';
  server = spawn('npm', ['start', '--silent'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  return server;
}

async function untilReady(child, timeoutMs) {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (child.exitCode !== null)
      throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${base}/ready`)).ok) return performance.now() - started;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`not ready after ${timeoutMs} ms:\n${output}`);
}

/** The worker's pid (DATA_DIR/db/server.json) and its parent, the API process. */
function pids() {
  const { pid: worker } = JSON.parse(readFileSync(join(dataDir, 'db', 'server.json'), 'utf8'));
  const stat = readFileSync(`/proc/${worker}/stat`, 'utf8');
  const api = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return { api, worker };
}

async function idleMemory(label) {
  await sleep(5000);
  const { api, worker } = pids();
  const figures = { label, api: memoryOf(api), worker: memoryOf(worker) };
  log(
    `  ${label.padEnd(34)} API ${mb(figures.api.rss)} (anon ${mb(figures.api.anon)})   ` +
      `database worker ${mb(figures.worker.rss)} (anon ${mb(figures.worker.anon)})`,
  );
  return figures;
}

async function stop() {
  if (!server || server.exitCode !== null) return;
  const { api } = pids();
  const exited = new Promise((resolve) => server.once('exit', resolve));
  process.kill(api, 'SIGTERM');
  await exited;
  // The worker leaves with its parent; wait for it to release the directory.
  for (let i = 0; i < 100; i += 1) {
    try {
      readFileSync(join(dataDir, 'db', 'server.json'));
      await sleep(100);
    } catch {
      return;
    }
  }
}

function run(command, commandArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.stderr.on('data', (chunk) => (text += chunk));
    child.on('exit', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`${commandArgs.join(' ')}: ${code}\n${text}`)),
    );
  });
}

/** utime+stime of a process in ms (USER_HZ 100). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * A few reads of every kind: list, proximity (PostGIS), text search, statistics, countries, one detail; five
 * rounds. Prints the database worker's CPU per request (steal-proof, unlike the wall time).
 */
async function readAll(label) {
  const { worker } = pids();
  const cpuBefore = cpuMs(worker);
  let requests = 0;
  const reads = [
    '/api/v1/libraries/',
    '/api/v1/libraries/?lat=52.52&lng=13.405&radius_km=5',
    '/api/v1/libraries/?q=books',
    '/api/v1/libraries/?search=berl',
    '/api/v1/statistics/',
    '/api/v1/libraries/countries',
  ];
  for (let round = 0; round < 5; round += 1) {
    for (const path of reads) {
      const res = await fetch(`${base}${path}`);
      requests += 1;
      if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
      const body = await res.json();
      if (round === 0 && path === reads[0] && body.items?.[0]?.slug) {
        reads.push(`/api/v1/libraries/${encodeURIComponent(body.items[0].slug)}`);
      }
    }
  }
  const perRequest = (cpuMs(worker) - cpuBefore) / requests;
  log(
    `  ${label.padEnd(34)} ${requests} reads, database worker ${perRequest.toFixed(1)} CPU-ms/read`,
  );
}

let failed = false;
try {
  log(`== embedded default in ${dataDir} (Node ${process.version})`);
  const first = await untilReady(start(), 300_000);
  log(`  first start (initdb, migrations) to /ready   ${(first / 1000).toFixed(1)} s`);
  const empty = await idleMemory('idle, empty database');
  await stop();

  const restart = await untilReady(start(), 120_000);
  log(`  restart (npm start, no build) to /ready       ${(restart / 1000).toFixed(1)} s`);
  const emptyAgain = await idleMemory('idle after restart, empty database');

  const seedStarted = performance.now();
  await run(process.execPath, [
    join(root, 'dist/src/cli/main.js'),
    'seed',
    '--libraries',
    String(libraries),
  ]);
  log(
    `  seed ${libraries} libraries                        ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );
  await readAll('reads after seeding');
  const full = await idleMemory(`idle, ${libraries} libraries, after reads`);
  await stop();

  // The steady state of a developer's database: a restart with the data in place, then the same reads.
  const restartFull = await untilReady(start(), 120_000);
  log(`  restart with ${libraries} libraries to /ready     ${(restartFull / 1000).toFixed(1)} s`);
  await readAll('reads after restart');
  await readAll('the same reads again');
  const fullAgain = await idleMemory(`idle after restart and reads`);
  await stop();

  log('');
  log(
    'Targets (issue 16): worker < 250 MB idle empty, < 400 MB with 10k libraries; restart in a few seconds.',
  );
  log(
    `  worker empty ${mb(empty.worker.rss)} (first start), ${mb(emptyAgain.worker.rss)} (restart); ` +
      `with ${libraries} libraries ${mb(full.worker.rss)} (after seeding), ${mb(fullAgain.worker.rss)} ` +
      `(restart); restart ${(restart / 1000).toFixed(1)} s`,
  );
} catch (error) {
  failed = true;
  process.stderr.write(`bench --embedded failed: ${error.stack ?? error}\n`);
} finally {
  await stop().catch(() => undefined);
  if (args.keep) log(`kept ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
