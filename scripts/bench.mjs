#!/usr/bin/env node
/**
 * `npm run bench` (issue 7): seeds a fresh PostgreSQL database with 100,000 libraries, starts the BUILT server in
 * production mode and drives it over loopback with autocannon, scenario by scenario, at 10 and 50 connections.
 * Prints a table and writes bench/results.json. See bench/README.md for what each scenario does and the targets.
 *
 *   npm run bench                       full run (100k libraries, 10 s per scenario after a 3 s warm-up)
 *   npm run bench -- --quick            CI smoke run (10k libraries, 3 s, 1 s warm-up, 10 connections only),
 *                                       written to bench/tmp/results-quick.json (git-ignored)
 *   npm run bench -- --repeat 3         every scenario three times (interleaved rounds); medians are reported
 *   npm run bench -- --only ceiling,list,proximity --repeat 2    (without `ceiling`, no ratios)
 *   npm run bench -- --profile          server runs with --cpu-prof (profiles land in bench/tmp/profiles)
 *   npm run bench -- --keep             keep the database (printed) for EXPLAIN ANALYZE afterwards
 *   npm run bench -- --embedded         the embedded default instead: idle RSS of the API and database processes,
 *                                       restart-to-ready time (scripts/bench-embedded.mjs)
 *   npm run bench -- --database NAME    measure a database kept by an earlier run (no migration, no seeding; kept)
 *   npm run bench -- --only export --libraries 1000000 --out bench/tmp/export-1m.json
 *                                       the open-data export (`npm run cli -- export`, twice: a new version, then
 *                                       an unchanged pass): wall time, CPU and peak RSS of the CLI process
 *
 *   npm run bench -- --media s3         media on an S3-compatible server (s3rver on loopback, the app on the AWS SDK)
 *                                       instead of MEDIA_ROOT: what submit-photo costs with object storage
 *
 * Other options: --libraries N, --duration S, --warmup S, --connections 10,50, --out FILE, --no-floor (skip the
 * pgbench replay of each scenario's SQL), --trace FILE (append every answer of the realistic scenarios as a JSON line:
 * URL, cold or warm, start, latency; read by bench/q-tail.mjs), --pool-size N (the server's DATABASE_POOL_SIZE; default:
 * the app's own default).
 * Environment: BENCH_DATABASE_URL (or TEST_DATABASE_URL): an admin URL of a PostgreSQL server with PostGIS,
 * default postgres://postgres@127.0.0.1:5432/postgres.
 *
 * Exit code 0 whenever the benchmark ran, whatever the figures; non-zero only when it could not run.
 */
/* global fetch */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { listParamGenerators, pageOf } from '../bench/realistic-requests.mjs';
import pg from 'pg';
import sharp from 'sharp';
import { machineCpu, processCpuMs, rssBytes, samplePostgresCpu } from '../bench/proc-cpu.mjs';
import { startFloorServer } from '../bench/node-floor.mjs';
import { freePort } from './free-port.mjs';

// `--embedded`: the embedded default's memory and restart time instead (scripts/bench-embedded.mjs, issue 16).
if (process.argv.includes('--embedded')) await import('./bench-embedded.mjs');

const root = new URL('..', import.meta.url).pathname;
const dist = (path) => new URL(`../dist/src/${path}`, import.meta.url).href;

// --- options -------------------------------------------------------------------------------------------------
const SCENARIOS = [
  'ceiling',
  'list',
  'list-auth',
  'proximity',
  'q',
  'search',
  'q-words',
  'search-words',
  'search-short',
  'list-filters',
  'proximity-random',
  'detail',
  'statistics-warm',
  'statistics-cold',
  'countries',
  'favourites',
  'submit-photo',
  'map-feed',
  'map-filtered',
  'tiles',
  'export',
];

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    repeat: { type: 'string' },
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    database: { type: 'string' },
    profile: { type: 'boolean', default: false },
    libraries: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    out: { type: 'string' },
    media: { type: 'string', default: 'local' },
    'no-floor': { type: 'boolean', default: false },
    trace: { type: 'string' },
    'pool-size': { type: 'string' },
  },
});

function positive(name, text, fallback) {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) usage(`--${name} must be a positive number`);
  return value;
}
function usage(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

const quick = args.quick;
const settings = {
  libraries: Math.round(positive('libraries', args.libraries, quick ? 10_000 : 100_000)),
  duration: positive('duration', args.duration, quick ? 3 : 10),
  warmup: positive('warmup', args.warmup, quick ? 1 : 3),
  connections: (args.connections ?? (quick ? '10' : '10,50'))
    .split(',')
    .map((text) => Math.round(positive('connections', text.trim(), 10))),
  repeat: Math.round(positive('repeat', args.repeat, 1)),
  only: args.only ? args.only.split(',').map((name) => name.trim()) : SCENARIOS,
  out: resolve(root, args.out ?? (quick ? 'bench/tmp/results-quick.json' : 'bench/results.json')),
  poolSize:
    args['pool-size'] === undefined
      ? undefined
      : Math.round(positive('pool-size', args['pool-size'])),
};
if (!['local', 's3'].includes(args.media)) usage('--media must be local or s3');
const unknown = settings.only.filter((name) => !SCENARIOS.includes(name));
if (unknown.length)
  usage(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
// Ratios need the ceiling of the same run: --only without `ceiling` leaves them empty.

/** Concurrent uploads of the photo scenario (issue 7: "10 concurrent"), whatever --connections says. */
const PHOTO_CONNECTIONS = 10;
/** Sequential cold computations of the statistics. */
const COLD_SAMPLES = quick ? 5 : 20;
const FAVOURITES = 50;
const API = '/api/v1';

const log = (text) => process.stdout.write(`${text}\n`);

// --- clean-up, also on failure and signals -----------------------------------------------------------------------
const cleanups = [];
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    for (const task of cleanups.reverse()) {
      try {
        await task();
      } catch (error) {
        process.stderr.write(`bench: clean-up step failed: ${error.message}\n`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, cleaning up\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

// --- helpers ---------------------------------------------------------------------------------------------------
const adminUrl =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function databaseUrl(name) {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The allocator settings of the production image (Dockerfile `ENV`). */
const PRODUCTION_MALLOC = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };

/** The environment of the CLI and the server: the caller's, minus every variable the app reads, plus ours. */
function appEnv(extra) {
  const env = { ...process.env };
  const appPrefixes = [
    'PORT',
    'HOST',
    'NODE_ENV',
    'LOG_LEVEL',
    'DATABASE_',
    'DATA_DIR',
    'MEDIA_',
    'S3_',
    'REDIS_',
    'TRUST_PROXY',
    'JWT_',
    'RATE_LIMIT_',
    'APPLE_',
    'GOOGLE_',
    'AI_',
    'MAPDB_',
    'BENCH_CEILING_ROUTE',
    'EXPORT_',
    'SERVICE_NAME',
    'CONTRIBUTOR_AGREEMENT_',
  ];
  for (const key of Object.keys(env)) {
    if (appPrefixes.some((prefix) => key === prefix || key.startsWith(prefix))) delete env[key];
  }
  return { ...env, ...extra };
}

function run(command, commandArgs, env) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, commandArgs, {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolveRun(output.trim())
        : reject(new Error(`${commandArgs.join(' ')} exited with ${code}:\n${output.trim()}`)),
    );
  });
}

const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : null;
const median = (values) => {
  const list = values.filter((value) => value !== null && value !== undefined);
  if (!list.length) return null;
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const round = (value, digits = 1) =>
  value === null || value === undefined ? null : Number(value.toFixed(digits));
const pick = (items) => items[Math.floor(Math.random() * items.length)];

// --- /proc sampling (bench/proc-cpu.mjs): RSS and CPU of the server, its database backends and the machine ------
class Probe {
  constructor(pid, databaseName) {
    this.pid = pid;
    this.databaseName = databaseName;
  }

  async snapshot() {
    const [server, machine] = await Promise.all([processCpuMs(this.pid), machineCpu()]);
    const own = process.cpuUsage();
    return {
      server,
      machine,
      bench: (own.user + own.system) / 1000,
      at: performance.now(),
    };
  }

  /** Samples the server's RSS every 200 ms until stop() and returns the peak. */
  sampleRss() {
    let peak = 0;
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const rss = await rssBytes(this.pid);
        if (rss !== null) peak = Math.max(peak, rss);
        await sleep(200);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await loop;
        const last = await rssBytes(this.pid);
        return Math.max(peak, last ?? 0) || null;
      },
    };
  }
}

const delta = (after, before, key) =>
  after[key] !== null && before[key] !== null ? after[key] - before[key] : null;

// --- the photo of the upload scenario -----------------------------------------------------------------------
/** A 12-megapixel (4000×3000) photo-like JPEG, about 4 MB: gradients, a pattern and sensor-like noise. */
async function twelveMegapixelJpeg() {
  const width = 4000;
  const height = 3000;
  const noise = await sharp({
    create: { width, height, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 10 } },
  })
    .raw()
    .toBuffer();
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const i = (y * width + x) * 3;
      pixels[i] = Math.max(0, Math.min(255, (x * 255) / width + noise[i] - 128));
      pixels[i + 1] = Math.max(0, Math.min(255, (y * 255) / height + noise[i + 1] - 128));
      pixels[i + 2] = Math.max(
        0,
        Math.min(255, 128 + 60 * Math.sin(x / 90) * Math.cos(y / 70) + noise[i + 2] - 128),
      );
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/**
 * A multipart/form-data body builder for one file and a few text fields. The file part is built once; `body(fields)`
 * puts fresh text fields in front of it for every request.
 */
function multipart(file) {
  const boundary = `----bench${randomBytes(12).toString('hex')}`;
  const filePart = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
        `Content-Type: ${file.type}\r\n\r\n`,
    ),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    size: filePart.length,
    body: (fields) =>
      Buffer.concat([
        ...Object.entries(fields).map(([name, value]) =>
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
          ),
        ),
        filePart,
      ]),
  };
}

// --- one autocannon measurement -------------------------------------------------------------------------------
/** Starts autocannon; the instance is thenable (resolves to the result), so the caller awaits it. */
function cannon(base, spec, connections, duration, onResponse) {
  const instance = autocannon({
    url: base,
    connections,
    duration,
    timeout: 30,
    method: spec.method ?? 'GET',
    headers: spec.headers ?? {},
    // Every request gets its own path (and body) from the scenario.
    requests: [{ setupRequest: (request) => ({ ...request, ...spec.request() }) }],
  });
  if (onResponse) instance.on('response', onResponse);
  return instance;
}

async function measure(base, probe, spec, connections) {
  // Scenarios whose URLs vary per request run in closedLoop (it knows each answer's URL: cold and warm latencies).
  const drive = (seconds, onResponse) =>
    spec.loop
      ? closedLoop(base, spec, connections, seconds, onResponse)
      : cannon(
          base,
          spec,
          connections,
          seconds,
          onResponse && ((_c, status, size, ms) => onResponse(status, size, ms, null)),
        );
  // RSS: the baseline before the warm-up, the peak over warm-up and measurement.
  const baselineRss = await rssBytes(probe.pid);
  const rss = probe.sampleRss();
  // A cold path slower than the warm-up (a common word's first count at 1M takes seconds) gets more warm-up time.
  let warmResult = await drive(settings.warmup);
  for (let extra = 0; extra < 4 && warmResult['2xx'] === 0; extra += 1)
    warmResult = await drive(settings.warmup * 2);
  if (warmResult['2xx'] === 0) {
    await rss.stop();
    throw new Error(
      `${spec.name}: no 2xx response during warm-up (${JSON.stringify(warmResult.statusCodeStats)}, ${warmResult.errors} errors)`,
    );
  }
  const latencies = [];
  const coldLatencies = [];
  const warmLatencies = [];
  let bytes = 0;
  const memoBefore = await memoCounters(base);
  const pgSampler = samplePostgresCpu(probe.databaseName);
  const before = await probe.snapshot();
  const traced = [];
  const result = await drive(settings.duration, (status, size, ms, cold, path, started) => {
    if (status >= 200 && status < 300) {
      if (args.trace && path !== undefined)
        traced.push({
          scenario: spec.name,
          connections,
          path,
          cold,
          at: performance.timeOrigin + started,
          ms,
        });
      latencies.push(ms);
      if (cold === true) coldLatencies.push(ms);
      if (cold === false) warmLatencies.push(ms);
      bytes += size;
    }
  });
  const after = await probe.snapshot();
  const sampledPostgresCpu = await pgSampler.stop();
  const peakRss = await rss.stop();
  const memoAfter = await memoCounters(base);
  latencies.sort((a, b) => a - b);
  coldLatencies.sort((a, b) => a - b);
  warmLatencies.sort((a, b) => a - b);
  // --trace FILE: every answer of a closed-loop scenario (URL, cold or warm, start (epoch ms), latency) as a JSON
  // line, for bench/q-tail.mjs.
  // Every scenario also leaves its measured window (epoch ms), to match with the server's event loop.
  if (args.trace) {
    const window = {
      scenario: spec.name,
      connections,
      window: [performance.timeOrigin + before.at, performance.timeOrigin + after.at],
    };
    appendFileSync(
      resolve(root, args.trace),
      [window, ...traced].map((t) => `${JSON.stringify(t)}\n`).join(''),
    );
  }
  const ok = latencies.length;
  const seconds = (after.at - before.at) / 1000;
  const machineTotal =
    after.machine && before.machine ? after.machine.total - before.machine.total : null;
  const serverCpu = delta(after, before, 'server');
  const postgresCpu = sampledPostgresCpu;
  return {
    rps: ok / (result.duration || seconds),
    bytesPerResponse: ok ? bytes / ok : null,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    coldShare: spec.loop && latencies.length ? coldLatencies.length / latencies.length : null,
    coldP99: spec.loop ? quantile(coldLatencies, 0.99) : null,
    warmP99: spec.loop ? quantile(warmLatencies, 0.99) : null,
    memoCountHit: memoHitRate(memoBefore, memoAfter, 'count'),
    memoPageHit: memoHitRate(memoBefore, memoAfter, 'page'),
    peakRss,
    rssGrowth: peakRss !== null && baselineRss !== null ? peakRss - baselineRss : null,
    serverCpuPerRequest: serverCpu !== null && ok ? serverCpu / ok : null,
    postgresCpuPerRequest: postgresCpu !== null && ok ? postgresCpu / ok : null,
    steal:
      machineTotal && machineTotal > 0
        ? (100 * (after.machine.steal - before.machine.steal)) / machineTotal
        : null,
    // CPU used by anything but the server, its database backends and this process (autocannon): other work on
    // the machine that competed with the run. A run with a high figure is not comparable.
    others:
      machineTotal && machineTotal > 0 && serverCpu !== null && postgresCpu !== null
        ? Math.max(
            0,
            (100 *
              (after.machine.busy -
                before.machine.busy -
                serverCpu -
                postgresCpu -
                (after.bench - before.bench))) /
              machineTotal,
          )
        : null,
    errors: result.errors + result.timeouts + result.non2xx,
    statusCodes: result.statusCodeStats,
  };
}

// --- realistic request mixes (issue 22) ---------------------------------------------------------------------
/**
 * Words people type into `q`, against the seed's vocabulary (src/cli/commands/seed-data.ts): very common ones (a word
 * of most names or descriptions), middling and rare ones, words that match nothing, accented words (typed with and
 * without accents), prefixes (the search is by word prefix), several words, and the seed's city and street names.
 */
const Q_WORDS = [
  // common
  'books',
  'book',
  'bücherschrank',
  'library',
  'free',
  'little free library',
  'nimm ein buch',
  'bring',
  // middling
  'poetry',
  'krimis',
  'telefonzelle',
  'telephone box',
  'bahnhof',
  'station',
  'rathaus',
  'town hall',
  'spielplatz',
  'playground',
  'brunnen',
  'cookbooks',
  'reiseführer',
  'volunteers',
  'nachbarn',
  'weatherproof',
  'kinderbücher',
  // rare or absent
  'zauberberg',
  'haiku',
  'manga',
  'quokka',
  'astrophysik',
  'comics',
  'atlas',
  'hörbuch',
  'vinyl',
  // accents, typed both ways
  'bücher',
  'bucher',
  'öffentlicher',
  'offentlicher',
  'bücherzelle',
  'tauschregal',
  'zürich',
  'zurich',
  'köln',
  'koln',
  'münchen',
  'straße',
  'strasse',
  'gemeindezentrum',
  'café',
  // prefixes
  'bü',
  'bib',
  'tel',
  'sta',
  'nov',
  'tau',
  'lese',
  'phon',
  'neigh',
  // several words
  'book swap',
  'offener bücherschrank',
  'phone box',
  'community bookshelf',
  'book nook',
  'bücherbox am markt',
];

/**
 * Substrings people type into `search` (issue 22), against the seed's texts (name, description, city, address, postal
 * code: src/cli/commands/seed-data.ts): common and rare, parts of words, accents typed both ways, city names, street
 * parts, postal fragments (also drawn from the seed's own codes, see realisticGenerators) and two-word phrases.
 */
const SEARCH_WORDS = [
  // common
  'bücher',
  'buch',
  'book',
  'library',
  'free',
  'straße',
  'street',
  'regal',
  // parts of words
  'bib',
  'cher',
  'schrank',
  'zelle',
  'brary',
  'shelf',
  'tausch',
  'nachbar',
  'wetterfest',
  'kinder',
  // rare or absent
  'zauberberg',
  'quokka',
  'haiku',
  'manga',
  'encyclop',
  'lexika',
  // accents, typed both ways
  'bucher',
  'strasse',
  'köln',
  'koln',
  'zürich',
  'zurich',
  'münchen',
  'munchen',
  'république',
  'republique',
  'gràcia',
  'kraków',
  'krakow',
  'nørrebro',
  'öffentlicher',
  // cities
  'berlin',
  'hamburg',
  'wien',
  'london',
  'portland',
  'oslo',
  'tokyo',
  'frankfurt am main',
  // street parts
  'allee',
  'avenue',
  'gasse',
  'kastanien',
  'road',
  'brick lane',
  'leith walk',
  // postal fragments
  '10',
  '101',
  '8004',
  'EH1',
  'M5',
  '750',
  // two-word phrases
  'free lib',
  'little free',
  'book swap',
  'nimm ein',
  'phone box',
  'am bahnhof',
  'town hall',
  'ein buch',
  'offener bücherschrank',
  'bus stop',
];

/**
 * `search` of one or two characters and phrases of two spaces or more (issue 22, session 9): letters, digits, accents
 * typed both ways, punctuation, and phrases of the seed's texts (src/cli/commands/seed-data.ts), common and rare.
 */
const SEARCH_SHORT = [
  // one character
  'e',
  'a',
  'k',
  'ö',
  'ü',
  'ß',
  'q',
  'x',
  '1',
  '5',
  '0',
  '.',
  '-',
  // two characters
  '10',
  '12',
  '99',
  '80',
  'er',
  'st',
  'ch',
  'bü',
  'bu',
  'ue',
  'øs',
  'zz',
  'qu',
  // two spaces and more
  'frankfurt am main',
  'nimm ein buch',
  'bring ein buch',
  'take a book',
  'leave a book',
  'rund um die uhr',
  'bücherschrank am bahnhof',
  'little free library',
  'next to the bus stop',
  'book swap box on',
  'am alten markt',
  'rue de la paix',
];

function realisticGenerators(SEED_CITIES, fragments) {
  const query = (params) =>
    `${API}/libraries/?${Object.entries(params)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&')}`;
  const lists = listParamGenerators(SEED_CITIES, fragments);
  return {
    'q-words': () => query({ q: pick(Q_WORDS), ...pageOf() }),
    // A seed postal code's first 4 digits in one request of six (what `search` replays), else a word of the list.
    'search-words': () =>
      query({
        search: Math.random() < 1 / 6 ? pick(fragments) : pick(SEARCH_WORDS),
        ...pageOf(),
      }),
    'search-short': () => query({ search: pick(SEARCH_SHORT), ...pageOf() }),
    // bench/realistic-requests.mjs (shared with bench/list-replay.mjs).
    'list-filters': () => query(lists['list-filters']()),
    'proximity-random': () => query(lists['proximity-random']()),
  };
}

/**
 * When each URL was last requested in this run: a request is "cold" when its URL was not requested within the list
 * memo's 30 s (so neither the memo nor, mostly, PostgreSQL's plan and buffer caches were primed by the same
 * request), "warm" otherwise.
 */
const lastRequested = new Map();
const MEMO_TTL_MS = 30_000;

/**
 * A closed loop like autocannon's, for scenarios whose URLs vary per request: `connections` workers over keep-alive
 * sockets, each sending its next request when the previous answer is complete. Unlike autocannon it knows the URL of
 * every answer, so latencies split into cold and warm.
 */
async function closedLoop(base, spec, connections, seconds, onResponse) {
  const { Agent, request: httpRequest } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(base);
  const end = performance.now() + seconds * 1000;
  const counts = { ok: 0, non2xx: 0, errors: 0 };
  const worker = async () => {
    while (performance.now() < end) {
      const { path } = spec.request();
      const now = Date.now();
      const seen = lastRequested.get(path);
      const cold = seen === undefined || now - seen > MEMO_TTL_MS;
      lastRequested.set(path, now);
      const started = performance.now();
      try {
        const { status, size } = await new Promise((resolveResponse, reject) => {
          const req = httpRequest(
            { host: target.hostname, port: target.port, path, agent, headers: spec.headers ?? {} },
            (res) => {
              let bytes = 0;
              res.on('data', (chunk) => (bytes += chunk.length));
              res.on('end', () => resolveResponse({ status: res.statusCode, size: bytes }));
              res.on('error', reject);
            },
          );
          req.on('error', reject);
          req.end();
        });
        const ms = performance.now() - started;
        if (status >= 200 && status < 300) {
          counts.ok += 1;
          onResponse?.(status, size, ms, cold, path, started);
        } else counts.non2xx += 1;
      } catch {
        counts.errors += 1;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return {
    '2xx': counts.ok,
    duration: (performance.now() - started) / 1000,
    errors: counts.errors,
    timeouts: 0,
    non2xx: counts.non2xx,
    statusCodeStats: {},
  };
}

/** The list memo's counters (GET /bench/memo), as { kind: { hits, shared, misses } }. */
async function memoCounters(base) {
  try {
    const res = await fetch(`${base}${API}/bench/memo`);
    const body = await res.json();
    return Object.fromEntries(body.items.map((item) => [item.kind, item]));
  } catch {
    return null;
  }
}

/** Share of memo lookups of `kind` answered without a query of their own, between two counter readings. */
function memoHitRate(before, after, kind) {
  if (!before || !after || !after[kind]) return null;
  const was = before[kind] ?? { hits: 0, shared: 0, misses: 0 };
  const hits = after[kind].hits - was.hits + (after[kind].shared - was.shared);
  const misses = after[kind].misses - was.misses;
  return hits + misses ? hits / (hits + misses) : null;
}

/**
 * Scenarios whose bare `node:http` + `pg` floor (bench/node-floor.mjs) runs beside them: their captured statements
 * served without the framework, the least Node can spend on them above the bare ceiling.
 */
const NODE_FLOOR = new Set(['list', 'list-auth', 'detail', 'favourites']);

/** Scenarios without SQL of their own to replay (or not a GET). */
const NO_FLOOR = new Set(['ceiling', 'statistics-warm', 'submit-photo']);

/** How many requests of a scenario are captured for its pgbench replay. */
const FLOOR_SAMPLES = 40;

/** A captured statement with its parameters inlined as literals of unknown type (as pg sends them). */
function inline(statement) {
  return pgbenchSafe(
    statement.text.replace(/\$(\d+)/g, (_match, n) => {
      const value = statement.params[Number(n) - 1];
      return value === null ? 'NULL' : `'${value.replace(/'/g, "''")}'`;
    }),
  );
}

/**
 * pgbench takes every `:name` of a script as a variable, even inside a string literal: in its extended and prepared
 * modes it sends a parameter the server does not see (`'[[:alnum:]]'`, a search's window check: "bind message
 * supplies 5 parameters, but prepared statement requires 0"). Such literals are written as escape strings with the
 * colon as `\x3a`, the same constant for PostgreSQL.
 */
function pgbenchSafe(sql) {
  return sql.replace(/(?<![A-Za-z0-9_&])'(?:[^']|'')*'/g, (literal) =>
    /(?<!:):[A-Za-z_]/.test(literal)
      ? `E${literal.replace(/\\/g, '\\\\').replace(/:/g, '\\x3a')}`
      : literal,
  );
}

/** The SQL of FLOOR_SAMPLES requests of a scenario as the server sent it (POST/GET /bench/capture), one array each. */
async function captureRequests(base, spec) {
  const groups = [];
  for (let i = 0; i < FLOOR_SAMPLES; i += 1) {
    await fetch(`${base}${API}/bench/capture`, { method: 'POST' });
    const { path } = spec.request();
    await (await fetch(`${base}${path}`, { headers: spec.headers ?? {} })).arrayBuffer();
    const { items } = await (await fetch(`${base}${API}/bench/capture`)).json();
    if (items.length) groups.push(items);
  }
  return groups;
}

/** How many times the bench executes each prepared statement of a scenario to see which plan PostgreSQL keeps. */
const PLAN_CHECK_EXECUTIONS = 10;

/**
 * Prepared statements that PostgreSQL plans again on every execution (issue 22). A prepared statement gets custom
 * plans (with its parameters' values) for five executions, then keeps the generic plan unless that is estimated to
 * cost more; then every execution is planned again. pgbench replays statements with their parameters inlined as
 * literals, planned once per connection, so its floor never shows this (the favourites page at 1M: 0.34 ms of
 * planning per request). Each distinct prepared text of the captured requests is prepared on one connection and
 * executed PLAN_CHECK_EXECUTIONS times with the captured parameters; a text without any generic plan by then counts.
 */
async function replannedStatements(url, groups) {
  const texts = new Map();
  for (const statement of groups.flat()) {
    if (!statement.prepared) continue;
    if (!texts.has(statement.text)) texts.set(statement.text, []);
    texts.get(statement.text).push(statement.params);
  }
  if (!texts.size) return null;
  // A check that cannot run (a statement the server no longer accepts) leaves the column empty, not the run failed.
  return withClient(url, async (client) => {
    await client.query('SET jit = off');
    let replanned = 0;
    let index = 0;
    for (const [text, parameterSets] of texts) {
      const name = `bench_plan_check_${(index += 1)}`;
      for (let i = 0; i < PLAN_CHECK_EXECUTIONS; i += 1)
        await client.query({ name, text, values: parameterSets[i % parameterSets.length] });
      const { rows } = await client.query(
        'SELECT generic_plans FROM pg_prepared_statements WHERE name = $1',
        [name],
      );
      if (Number(rows[0]?.generic_plans ?? 0) === 0) replanned += 1;
    }
    return { prepared: texts.size, replanned };
  }).catch((error) => {
    process.stderr.write(`bench: plan check failed: ${error.message}\n`);
    return null;
  });
}

/** A pgbench run of `file` against the bench database; `rate` (transactions per second) throttles it (`-R`). */
async function pgbench(file, prepared, connections, url, databaseName, rate) {
  const target = new URL(url);
  const pgSampler = samplePostgresCpu(databaseName);
  const output = await run(
    'pgbench',
    [
      '-n',
      '-M',
      prepared ? 'prepared' : 'extended',
      '-c',
      String(connections),
      '-j',
      '2',
      '-T',
      String(Math.max(1, Math.round(settings.duration))),
      ...(rate ? ['-R', String(Math.max(1, Math.round(rate)))] : []),
      '-h',
      target.hostname,
      '-p',
      target.port || '5432',
      '-U',
      decodeURIComponent(target.username || 'postgres'),
      '-f',
      file,
      databaseName,
    ],
    // The app's session settings (data-source-options.ts): with JIT, pgbench compiled for up to seconds per
    // statement that the app runs in milliseconds (a proximity count with the grid's cell arrays inlined).
    {
      ...process.env,
      PGPASSWORD: decodeURIComponent(target.password ?? ''),
      PGOPTIONS: '-c jit=off',
    },
  );
  const pgCpu = await pgSampler.stop();
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? NaN);
  const transactions = Number(
    /number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? NaN,
  );
  return {
    tps: Number.isFinite(tps) ? tps : null,
    pgCpuPerTransaction: pgCpu !== null && transactions > 0 ? pgCpu / transactions : null,
  };
}

/**
 * The floor of a scenario: the SQL its requests read (captured by the server), replayed alone with pgbench at the
 * same number of connections for the same duration. One pgbench transaction is one request's statements, drawn at
 * random among FLOOR_SAMPLES captured requests; prepared when the app prepared them. Run twice: as fast as it goes
 * (PostgreSQL's capacity for that SQL), and throttled to the route's own req/s (`routeRps`): a backend that waits
 * between statements pays its wake-up and cold caches on each, so the same SQL costs more CPU per transaction at a
 * lower rate (issue 22: favourites' two statements, 0.21 pg CPU-ms flat out, 0.34–0.52 at 200–700 tps), and the
 * route's pg CPU-ms compares with the throttled figure.
 */
async function measureFloor(base, spec, connections, url, databaseName, temp, routeRps) {
  const groups = await captureRequests(base, spec);
  if (!groups.length) return null;
  const prepared = groups.every((group) => group.every((statement) => statement.prepared));
  const script = [
    `\\set r random(1, ${groups.length})`,
    ...groups.flatMap((group, i) => [
      i === 0 ? `\\if :r = 1` : `\\elif :r = ${i + 1}`,
      ...group.map((statement) => `${inline(statement).replace(/\s+/g, ' ').trim()};`),
    ]),
    '\\endif',
  ].join('\n');
  const file = join(temp, `floor-${spec.name}.sql`);
  writeFileSync(file, `${script}\n`);
  const flat = await pgbench(file, prepared, connections, url, databaseName, null);
  const atRate = routeRps
    ? await pgbench(file, prepared, connections, url, databaseName, routeRps)
    : null;
  return {
    tps: flat.tps,
    replanned: await replannedStatements(url, groups),
    pgCpuPerTransaction: flat.pgCpuPerTransaction,
    pgCpuAtRouteRate: atRate?.pgCpuPerTransaction ?? null,
    statementsPerRequest: groups.reduce((sum, g) => sum + g.length, 0) / groups.length,
    mode: prepared ? 'prepared' : 'extended',
    groups,
  };
}

/**
 * Cold statistics: the in-process cache cannot be emptied from outside without a restart, so the cold figure is
 * the service's own computation (the built StatisticsService.compute(): every aggregate query, as a cache miss
 * runs them) against the bench database, COLD_SAMPLES times in a row, timed end to end.
 */
async function measureColdStatistics(url) {
  const typeorm = await import('typeorm');
  const { StatisticsService } = await import(dist('statistics/statistics.service.js'));
  const { StatisticsRepository } = await import(dist('statistics/statistics.repository.js'));
  const { Clock } = await import(dist('common/clock.js'));
  const dataSource = new typeorm.DataSource({ type: 'postgres', url, entities: [] });
  await dataSource.initialize();
  try {
    const service = new StatisticsService(
      new StatisticsRepository(dataSource),
      new Clock(),
      { redisKeyPrefix: 'bench:' },
      null,
    );
    const times = [];
    for (let i = 0; i < COLD_SAMPLES; i += 1) {
      const started = performance.now();
      await service.compute();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((sum, t) => sum + t, 0) / times.length;
    return {
      rps: 1000 / mean,
      bytesPerResponse: null,
      p50: quantile(times, 0.5),
      p99: quantile(times, 0.99),
      peakRss: null,
      rssGrowth: null,
      serverCpuPerRequest: null,
      postgresCpuPerRequest: null,
      steal: null,
      others: null,
      errors: 0,
    };
  } finally {
    await dataSource.destroy();
  }
}

/**
 * The open-data export, run as `npm run cli -- export` in a child process, twice: the first pass writes a version,
 * the second reads everything again and finds nothing changed. Peak RSS is sampled every 100 ms; node CPU is exact (the
 * child's, from this process's reaped-children counters), PostgreSQL's is its database's backends sampled every 200 ms
 * (samplePostgresCpu: a backend that exits loses at most its last 200 ms).
 */
async function measureExport(cli, env, databaseName, mediaRoot) {
  const passes = [];
  for (const pass of ['new version', 'unchanged']) {
    const cpuBefore = await processCpuMs(process.pid, true);
    const pgSampler = samplePostgresCpu(databaseName);
    const started = performance.now();
    const child = spawn(process.execPath, [cli, 'export'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk) => (output = (output + chunk).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exitCode = null;
    const exited = new Promise((resolveExit) =>
      child.on('exit', (code) => {
        exitCode = code ?? 1;
        resolveExit();
      }),
    );
    let peak = 0;
    while (exitCode === null) {
      const rss = await rssBytes(child.pid);
      if (rss !== null) peak = Math.max(peak, rss);
      await Promise.race([exited, sleep(100)]);
    }
    const seconds = (performance.now() - started) / 1000;
    if (exitCode !== 0) throw new Error(`export exited with ${exitCode}:\n${output}`);
    const cpuAfter = await processCpuMs(process.pid, true);
    const pgCpuMs = await pgSampler.stop();
    passes.push({
      pass,
      seconds,
      peakRssMb: peak / 2 ** 20,
      nodeCpuMs: cpuAfter !== null && cpuBefore !== null ? cpuAfter - cpuBefore : null,
      pgCpuMs,
      summary: output.trim().split('\n').pop(),
    });
  }
  const files = readdirSync(join(mediaRoot, 'exports')).map((name) => ({
    name,
    mb: statSync(join(mediaRoot, 'exports', name)).size / 1e6,
  }));
  return { passes, files };
}

// --- --media s3 ------------------------------------------------------------------------------------------------
/**
 * An S3-compatible server on loopback for `--media s3`: s3rver (the test double, a dev dependency) with a fresh
 * bucket; answers the app's MEDIA_STORAGE=s3 settings. Its CPU is this bench process's, not the server's.
 */
async function startBenchS3(temp) {
  const { default: S3rver } = await import('s3rver');
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const directory = join(temp, 's3');
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = await server.run();
  cleanups.push(() => server.close());
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials });
  await client.send(new CreateBucketCommand({ Bucket: 'bench-media' }));
  client.destroy();
  log(`media on s3rver at ${endpoint}, bucket bench-media`);
  return {
    MEDIA_STORAGE: 's3',
    S3_BUCKET: 'bench-media',
    S3_REGION: 'us-east-1',
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  };
}

// --- the run ---------------------------------------------------------------------------------------------------
async function main() {
  if (!existsSync(join(root, 'dist/src/main.js'))) {
    throw new Error('dist/src/main.js is missing: run `npm run build` (npm run bench does)');
  }
  const started = performance.now();
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const reused = args.database ?? null;
  // A kept run's database, or a copy of the lead's 1M seed (bench1m_<branch suffix>).
  if (reused !== null && !/^(bookcase_bench_[0-9]{14}_[0-9a-f]{4}|bench1m_[a-z0-9]+)$/.test(reused))
    usage(
      '--database must name a database kept by an earlier run (bookcase_bench_<stamp>_<hex>) or bench1m_<suffix>',
    );
  const databaseName = reused ?? `bookcase_bench_${stamp}_${randomBytes(2).toString('hex')}`;
  const url = databaseUrl(databaseName);
  const temp = mkdtempSync(join(tmpdir(), 'bookcase-bench-'));
  cleanups.push(() => rmSync(temp, { recursive: true, force: true }));

  const postgres = await withClient(adminUrl, async (client) => {
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    const postgis = (
      await client.query(
        "SELECT default_version FROM pg_available_extensions WHERE name = 'postgis'",
      )
    ).rows[0]?.default_version;
    if (!postgis) throw new Error(`PostGIS is not available on ${adminUrl}`);
    // Leftovers of runs killed before their clean-up (the name holds the start time): older than a day.
    const old = await client.query(
      "SELECT datname FROM pg_database WHERE datname ~ '^bookcase_bench_[0-9]{14}_'",
    );
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString().replace(/\D/g, '').slice(0, 14);
    for (const { datname } of old.rows) {
      if (datname.slice('bookcase_bench_'.length, 'bookcase_bench_'.length + 14) < dayAgo)
        await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    if (reused === null) await client.query(`CREATE DATABASE ${databaseName}`);
    return { version, postgis };
  });
  if (args.keep || reused !== null) log(`database kept: ${url}`);
  else
    cleanups.push(() =>
      withClient(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`),
      ),
    );

  const env = appEnv({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    // A full run lasts longer than the default 5-minute access token.
    JWT_ACCESS_TTL: '2h',
    RATE_LIMIT_ENABLED: 'false',
    DATA_DIR: join(temp, 'data'),
    MEDIA_ROOT: join(temp, 'media'),
    BENCH_CEILING_ROUTE: 'true',
    // The server never exports on its own during a run (the `export` scenario runs the CLI).
    EXPORT_INTERVAL: 'off',
    // glibc's allocator as the Docker image configures it (see the Dockerfile): without these, the memory sharp
    // frees stays in per-thread arenas and the photo scenario's RSS growth is ~60 MB higher. A caller's own
    // values win, so `MALLOC_ARENA_MAX= npm run bench` measures the glibc defaults.
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? PRODUCTION_MALLOC.MALLOC_ARENA_MAX,
    MALLOC_TRIM_THRESHOLD_:
      process.env.MALLOC_TRIM_THRESHOLD_ ?? PRODUCTION_MALLOC.MALLOC_TRIM_THRESHOLD_,
  });
  // The caller's DATABASE_* never reach the server (appEnv); --pool-size is how a run chooses its pool.
  if (settings.poolSize !== undefined) env.DATABASE_POOL_SIZE = String(settings.poolSize);
  if (args.media === 's3') Object.assign(env, await startBenchS3(temp));
  const cli = join(root, 'dist/src/cli/main.js');
  if (reused === null) {
    log(`== database ${databaseName}: migrate, seed ${settings.libraries} libraries`);
    await run(process.execPath, [cli, 'migrate'], env);
    log(
      await run(
        process.execPath,
        [cli, 'seed', '--libraries', String(settings.libraries), '--with-photos'],
        env,
      ),
    );
    // The steady state of a production table: autovacuum has set the visibility map (index-only scans need it) and
    // analysed the rows. Without this a run would depend on whether, and when, autovacuum starts during it. The
    // map's grid (library_map_cells) is read by index-only scans, which need it too.
    await withClient(url, (client) =>
      client.query('VACUUM (ANALYZE) libraries, library_map_cells'),
    );
  } else {
    // The report names the size measured, not the --libraries default.
    settings.libraries = await withClient(url, async (client) =>
      Number((await client.query('SELECT count(*) AS n FROM libraries')).rows[0].n),
    );
    log(
      `== database ${databaseName}: reused as it is (no migration, no seeding; ${settings.libraries} libraries)`,
    );
  }

  // Only the upload scenario needs the 12 MP photo (seconds of CPU to make).
  const photo = settings.only.includes('submit-photo') ? twelveMegapixelJpeg() : Buffer.alloc(0);

  // The server.
  const port = await freePort();
  const serverArgs = [];
  if (args.profile) {
    const profiles = join(root, 'bench/tmp/profiles');
    mkdirSync(profiles, { recursive: true });
    serverArgs.push('--cpu-prof', `--cpu-prof-dir=${profiles}`);
    log(`CPU profile of the server will be written to ${profiles}`);
  }
  const server = spawn(process.execPath, [...serverArgs, join(root, 'dist/src/main.js')], {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let serverOutput = '';
  const keepOutput = (chunk) => {
    serverOutput = (serverOutput + chunk).slice(-8000);
  };
  server.stdout.on('data', keepOutput);
  server.stderr.on('data', keepOutput);
  let serverExit = null;
  const exited = new Promise((resolveExit) =>
    server.on('exit', (code, signal) => {
      serverExit = { code, signal };
      resolveExit();
    }),
  );
  cleanups.push(async () => {
    if (serverExit) return;
    server.kill('SIGTERM');
    const stopped = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!stopped) {
      server.kill('SIGKILL');
      await exited;
    }
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (serverExit)
      throw new Error(`the server exited (${JSON.stringify(serverExit)}):\n${serverOutput}`);
    try {
      const res = await fetch(`${base}/ready`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`the server was not ready within 60 s:\n${serverOutput}`);
    await sleep(250);
  }
  log(`== server pid ${server.pid} ready on ${base}`);

  // Fixtures: a user with favourites, slugs, postal-code fragments, city centres.
  const call = async (method, path, body, token) => {
    const res = await fetch(`${base}${API}${path}`, {
      method,
      headers: {
        ...(body ? { 'Content-Type': 'application/json' } : {}),
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const suffix = randomBytes(4).toString('hex');
  const { access: token } = await call('POST', '/auth/register', {
    username: `bench_${suffix}`,
    email: `bench_${suffix}@example.com`,
    password: `Bench-${randomBytes(12).toString('base64url')}!`,
  });
  const { slugs, fragments } = await withClient(url, async (client) => ({
    slugs: (
      await client.query(
        "SELECT slug FROM libraries WHERE status = 'approved' ORDER BY random() LIMIT 1000",
      )
    ).rows.map((row) => row.slug),
    fragments: (
      await client.query(
        `SELECT left(postal_code, 4) AS fragment FROM libraries
         WHERE status = 'approved' AND postal_code ~ '^[0-9]{5}$' ORDER BY random() LIMIT 200`,
      )
    ).rows.map((row) => row.fragment),
  }));
  for (const slug of slugs.slice(0, FAVOURITES)) {
    await call('POST', `/libraries/${encodeURIComponent(slug)}/favourite`, undefined, token);
  }
  const { SEED_CITIES } = await import(dist('cli/commands/seed-data.js'));
  const upload = multipart({
    field: 'photo',
    name: 'photo.jpg',
    type: 'image/jpeg',
    data: await photo,
  });
  let submissions = 0;
  if (settings.only.includes('submit-photo'))
    log(`12 MP upload: ${(upload.size / 1e6).toFixed(1)} MB`);

  const auth = { Authorization: `Bearer ${token}` };
  const get = (path) => ({ request: () => ({ path: path() }) });
  const specs = {
    ceiling: get(() => `${API}/bench/ceiling`),
    list: get(() => `${API}/libraries/`),
    proximity: get(() => {
      const city = pick(SEED_CITIES);
      return `${API}/libraries/?lat=${city.lat}&lng=${city.lng}&radius_km=5`;
    }),
    q: get(() => `${API}/libraries/?q=books`),
    search: get(() => `${API}/libraries/?search=${encodeURIComponent(pick(fragments))}`),
    // Realistic mixes (issue 22): URLs vary per request, so these run in closedLoop (cold and warm latencies).
    ...Object.fromEntries(
      Object.entries(realisticGenerators(SEED_CITIES, fragments)).map(([name, path]) => [
        name,
        { ...get(path), loop: true },
      ]),
    ),
    detail: get(() => `${API}/libraries/${encodeURIComponent(pick(slugs))}`),
    'statistics-warm': get(() => `${API}/statistics/`),
    countries: get(() => `${API}/libraries/countries`),
    // The default list read by a signed-in user (issue 22): the session check and `is_favourited` on top of `list`.
    'list-auth': { ...get(() => `${API}/libraries/`), headers: auth },
    favourites: { ...get(() => `${API}/libraries/favourites`), headers: auth },
    // The map (issue 17): a box of city size (~0.3° × 0.2°) or country size (~8° × 5°) around a random seed city,
    // at a random zoom from 5 to 15.
    'map-feed': get(() => {
      const city = pick(SEED_CITIES);
      const [width, height] = Math.random() < 0.5 ? [0.3, 0.2] : [8, 5];
      const west = city.lng - width * Math.random();
      const south = city.lat - height * Math.random();
      const bbox = [west, south, west + width, south + height].map((v) => v.toFixed(5));
      return `${API}/libraries/map?bbox=${bbox.join(',')}&zoom=${5 + Math.floor(Math.random() * 11)}`;
    }),
    // The same boxes with a filter: the grid's facets (the city's country, has_photo, both) or a text filter
    // (a 4-digit postal-code fragment: read from the filter's matches, or refused with 422 too_many_matches when
    // both the box and the filter hold more than 5,000 libraries).
    'map-filtered': get(() => {
      const city = pick(SEED_CITIES);
      const [width, height] = Math.random() < 0.5 ? [0.3, 0.2] : [8, 5];
      const west = city.lng - width * Math.random();
      const south = city.lat - height * Math.random();
      const bbox = [west, south, west + width, south + height].map((v) => v.toFixed(5));
      const filter = pick([
        `country=${city.country}`,
        `has_photo=${Math.random() < 0.5}`,
        `country=${city.country}&has_photo=true`,
        `postal_code=${encodeURIComponent(pick(fragments))}`,
      ]);
      return `${API}/libraries/map?bbox=${bbox.join(',')}&zoom=${5 + Math.floor(Math.random() * 11)}&${filter}`;
    }),
    // A random tile of zoom 3 to 16 holding a point within ~10 km of a random seed city.
    tiles: get(() => {
      const city = pick(SEED_CITIES);
      const z = 3 + Math.floor(Math.random() * 14);
      const lng = city.lng + (Math.random() - 0.5) * 0.25;
      const lat = city.lat + (Math.random() - 0.5) * 0.18;
      const n = 2 ** z;
      const x = Math.floor(((lng + 180) / 360) * n);
      const y = Math.floor(
        (0.5 - Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360)) / (2 * Math.PI)) * n,
      );
      return `${API}/libraries/tiles/${z}/${x}/${y}.mvt`;
    }),
    'submit-photo': {
      method: 'POST',
      headers: { ...auth, 'Content-Type': upload.contentType },
      // Distinct addresses, as real submissions have: identical ones would all race for one slug.
      request: () => {
        submissions += 1;
        return {
          path: `${API}/libraries/`,
          body: upload.body({
            name: `Bench bookcase ${submissions}`,
            description: 'A bookcase submitted by npm run bench.',
            address: `Benchstraße ${submissions}`,
            city: 'Berlin',
            country: 'DE',
            latitude: '52.52',
            longitude: '13.405',
          }),
        };
      },
    },
  };

  const probe = new Probe(server.pid, databaseName);
  const exportRuns = [];
  const runs = new Map();
  const record = (name, connections, figures) => {
    const key = `${name}@${connections}`;
    if (!runs.has(key)) runs.set(key, { name, connections, figures: [] });
    runs.get(key).figures.push(figures);
  };
  const line = (name, connections, f) =>
    log(
      `  ${name.padEnd(16)} c=${String(connections).padEnd(3)} ${f.rps.toFixed(1).padStart(8)} req/s  ` +
        `p50 ${fmt(f.p50)} ms  p99 ${fmt(f.p99)} ms  node ${fmt(f.serverCpuPerRequest, 2)} ` +
        `pg ${fmt(f.postgresCpuPerRequest, 2)} CPU-ms/req  steal ${fmt(f.steal, 0)}%  other load ${fmt(f.others, 0)}%` +
        (f.coldP99 !== null && f.coldP99 !== undefined
          ? `  cold p99 ${fmt(f.coldP99)} (${fmt(100 * f.coldShare, 0)}%) warm p99 ${fmt(f.warmP99)} ms`
          : '') +
        (f.memoCountHit !== null && f.memoCountHit !== undefined
          ? `  memo hit ${fmt(100 * f.memoCountHit, 0)}%`
          : '') +
        (f.floorTps
          ? `  pgbench ${fmt(f.floorTps, 0)} tps (${f.floorMode}, pg ${fmt(f.floorPgCpu, 2)}; ` +
            `at the route's rate pg ${fmt(f.floorPgCpuAtRate, 2)})`
          : '') +
        (f.replanned?.replanned
          ? `  !! ${f.replanned.replanned} of ${f.replanned.prepared} prepared statement(s) planned on every execution`
          : '') +
        (f.nodeFloor !== null && f.nodeFloor !== undefined
          ? `  node floor ${fmt(f.nodeFloor, 2)} above its bare ceiling`
          : '') +
        (f.errors ? `  !! ${f.errors} errors/non-2xx ${JSON.stringify(f.statusCodes)}` : ''),
    );

  // The bare node:http + pg server of the node floor, started once; its ceiling is measured once per round and
  // connection count, before the first scenario that needs it.
  const nodeFloor =
    !args['no-floor'] && settings.only.some((name) => NODE_FLOOR.has(name))
      ? await startFloorServer({ url, secret: env.JWT_SECRET })
      : null;
  if (nodeFloor) cleanups.push(async () => nodeFloor.stop());
  const bareCeilings = new Map();
  const bareOptions = (connections) => ({
    connections,
    seconds: settings.duration,
    warmup: settings.warmup,
  });

  for (let round = 1; round <= settings.repeat; round += 1) {
    log(`== round ${round}/${settings.repeat}`);
    for (const name of settings.only) {
      if (name === 'export') {
        exportRuns.push(await measureExport(cli, env, databaseName, join(temp, 'media')));
        for (const pass of exportRuns.at(-1).passes) {
          log(
            `  export ${pass.pass.padEnd(12)} ${pass.seconds.toFixed(1).padStart(7)} s  peak RSS ${pass.peakRssMb.toFixed(0)} MB  ` +
              `node ${fmt(pass.nodeCpuMs, 0)} CPU-ms  pg ${fmt(pass.pgCpuMs, 0)} CPU-ms  (${pass.summary})`,
          );
        }
        // Each round starts without versions, so every round measures a new version first.
        rmSync(join(temp, 'media', 'exports'), { recursive: true, force: true });
        await withClient(url, (client) =>
          client.query('TRUNCATE export_versions; DELETE FROM scheduled_tasks'),
        );
        continue;
      }
      if (name === 'statistics-cold') {
        const figures = await measureColdStatistics(url);
        record(name, 1, figures);
        line(name, 1, figures);
        continue;
      }
      const levels = name === 'submit-photo' ? [PHOTO_CONNECTIONS] : settings.connections;
      for (const connections of levels) {
        const figures = await measure(base, probe, { name, ...specs[name] }, connections);
        if (!args['no-floor'] && !NO_FLOOR.has(name)) {
          const floor = await measureFloor(
            base,
            { name, ...specs[name] },
            connections,
            url,
            databaseName,
            temp,
            figures.rps,
          );
          figures.floorTps = floor?.tps ?? null;
          figures.floorPgCpu = floor?.pgCpuPerTransaction ?? null;
          figures.floorPgCpuAtRate = floor?.pgCpuAtRouteRate ?? null;
          figures.floorMode = floor?.mode ?? null;
          figures.replanned = floor?.replanned ?? null;
          figures.replannedCount = floor?.replanned?.replanned ?? null;
          if (nodeFloor && floor && NODE_FLOOR.has(name)) {
            const key = `${round}@${connections}`;
            if (!bareCeilings.has(key))
              bareCeilings.set(key, await nodeFloor.measure('/ceiling', bareOptions(connections)));
            await nodeFloor.setScenario(name, floor.groups);
            const bare = await nodeFloor.measure(`/s/${name}`, {
              ...bareOptions(connections),
              headers: specs[name].headers ?? {},
            });
            const bareCeiling = bareCeilings.get(key);
            figures.nodeFloor =
              bare.cpu !== null && bareCeiling.cpu !== null && !bare.errors
                ? bare.cpu - bareCeiling.cpu
                : null;
          }
        }
        record(name, connections, figures);
        line(name, connections, figures);
        if (serverExit) throw new Error(`the server died during ${name}:\n${serverOutput}`);
      }
    }
  }

  // Medians over the rounds (peaks: the highest).
  const ceilingAt = new Map();
  const rows = [...runs.values()].map(({ name, connections, figures }) => {
    const max = (key) => {
      const list = figures
        .map((f) => f[key])
        .filter((value) => value !== null && value !== undefined);
      return list.length ? Math.max(...list) : null;
    };
    const row = {
      name,
      connections,
      rps: median(figures.map((f) => f.rps)),
      bytes: median(figures.map((f) => f.bytesPerResponse)),
      p50: median(figures.map((f) => f.p50)),
      p99: median(figures.map((f) => f.p99)),
      peakRss: max('peakRss'),
      rssGrowth: max('rssGrowth'),
      serverCpu: median(figures.map((f) => f.serverCpuPerRequest)),
      postgresCpu: median(figures.map((f) => f.postgresCpuPerRequest)),
      steal: median(figures.map((f) => f.steal)),
      others: median(figures.map((f) => f.others)),
      coldShare: median(figures.map((f) => f.coldShare)),
      coldP99: median(figures.map((f) => f.coldP99)),
      warmP99: median(figures.map((f) => f.warmP99)),
      memoCountHit: median(figures.map((f) => f.memoCountHit)),
      memoPageHit: median(figures.map((f) => f.memoPageHit)),
      floorTps: median(figures.map((f) => f.floorTps)),
      floorPgCpu: median(figures.map((f) => f.floorPgCpu)),
      floorPgCpuAtRate: median(figures.map((f) => f.floorPgCpuAtRate ?? null)),
      nodeFloor: median(figures.map((f) => f.nodeFloor ?? null)),
      replanned: max('replannedCount'),
      errors: figures.reduce((sum, f) => sum + f.errors, 0),
    };
    if (name === 'ceiling') ceilingAt.set(connections, row.rps);
    return row;
  });
  const ceilingRps = ceilingAt.get(10) ?? [...ceilingAt.values()][0] ?? null;
  const ceilingCpuAt = new Map(
    rows.filter((row) => row.name === 'ceiling').map((row) => [row.connections, row.serverCpu]),
  );
  for (const row of rows) {
    const ceiling = ceilingAt.get(row.connections);
    const ceilingCpu = ceilingCpuAt.get(row.connections);
    // Node's CPU per request beyond what the framework alone costs (the ceiling route at the same connections).
    row.nodeAboveCeiling =
      row.serverCpu !== null &&
      ceilingCpu !== undefined &&
      ceilingCpu !== null &&
      row.name !== 'ceiling'
        ? row.serverCpu - ceilingCpu
        : null;
    // The share of PostgreSQL's own capacity for the scenario's SQL (pgbench, same connections) the route reaches.
    row.floorRatio = row.floorTps ? row.rps / row.floorTps : null;
    // The photo scenario's uploads are not comparable with a 6.7 KB GET: no ratio.
    row.ratio =
      row.name === 'statistics-cold' || row.name === 'submit-photo' || !ceiling
        ? null
        : row.rps / ceiling;
  }

  const results = {
    machine: {
      cores: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      postgresql: postgres.version,
      postgis: postgres.postgis,
      date: new Date().toISOString(),
      libraries: settings.libraries,
      duration_s: settings.duration,
      warmup_s: settings.warmup,
      rounds: settings.repeat,
      media: args.media,
      pool_size: settings.poolSize ?? 'default',
    },
    ceiling_rps: round(ceilingRps),
    export: exportRuns.length
      ? {
          passes: ['new version', 'unchanged'].map((pass) => {
            const all = exportRuns.map((r) => r.passes.find((p) => p.pass === pass));
            return {
              pass,
              seconds: round(median(all.map((p) => p.seconds)), 1),
              peak_rss_mb: round(Math.max(...all.map((p) => p.peakRssMb)), 0),
              node_cpu_ms: round(median(all.map((p) => p.nodeCpuMs)), 0),
              pg_cpu_ms: round(median(all.map((p) => p.pgCpuMs)), 0),
            };
          }),
          files_mb: Object.fromEntries(
            exportRuns
              .at(-1)
              .files.map((f) => [
                f.name.replace(/^libraries-\d+T\d+Z/, 'libraries-…'),
                round(f.mb, 1),
              ]),
          ),
        }
      : undefined,
    scenarios: rows.map((row) => ({
      name: row.name,
      connections: row.connections,
      rps: round(row.rps),
      bytes_per_response: round(row.bytes, 0),
      p50_ms: round(row.p50, 2),
      p99_ms: round(row.p99, 2),
      ratio_to_ceiling: round(row.ratio, 3),
      peak_rss_mb: row.peakRss === null ? null : round(row.peakRss / 2 ** 20),
      node_cpu_ms_per_request: round(row.serverCpu, 3),
      node_cpu_ms_above_ceiling: round(row.nodeAboveCeiling, 3),
      pg_cpu_ms_per_request: round(row.postgresCpu, 3),
      cold_share: round(row.coldShare, 3),
      cold_p99_ms: round(row.coldP99, 2),
      warm_p99_ms: round(row.warmP99, 2),
      memo_count_hit_rate: round(row.memoCountHit, 3),
      memo_page_hit_rate: round(row.memoPageHit, 3),
      pgbench_tps: round(row.floorTps),
      pgbench_pg_cpu_ms_per_transaction: round(row.floorPgCpu, 3),
      pgbench_pg_cpu_ms_per_transaction_at_route_rate: round(row.floorPgCpuAtRate, 3),
      node_floor_cpu_ms_above_ceiling: round(row.nodeFloor, 3),
      prepared_statements_planned_every_time: row.replanned,
      ratio_to_pgbench: round(row.floorRatio, 3),
    })),
  };
  mkdirSync(dirname(settings.out), { recursive: true });
  writeFileSync(settings.out, `${JSON.stringify(results, null, 2)}\n`);

  const header = [
    'scenario',
    'conns',
    'req/s',
    'bytes/resp',
    'p50 ms',
    'p99 ms',
    'ratio',
    'peak RSS MB',
    'RSS growth MB',
    'node CPU-ms/req',
    'node above ceiling',
    'node floor',
    'pg CPU-ms/req',
    'cold p99',
    'warm p99',
    'memo hit %',
    'pgbench tps',
    'pg ms/tx at route rate',
    'route/pgbench',
    're-planned',
    'steal %',
    'other load %',
  ];
  const table = rows.map((row) => [
    row.name,
    String(row.connections),
    row.rps.toFixed(1),
    fmt(row.bytes, 0),
    fmt(row.p50),
    fmt(row.p99),
    row.ratio === null ? '–' : row.ratio.toFixed(2),
    row.peakRss === null ? '–' : (row.peakRss / 2 ** 20).toFixed(0),
    row.rssGrowth === null ? '–' : (row.rssGrowth / 2 ** 20).toFixed(0),
    fmt(row.serverCpu, 2),
    fmt(row.nodeAboveCeiling, 2),
    fmt(row.nodeFloor, 2),
    fmt(row.postgresCpu, 2),
    fmt(row.coldP99),
    fmt(row.warmP99),
    row.memoCountHit === null || row.memoCountHit === undefined
      ? '–'
      : (100 * row.memoCountHit).toFixed(0),
    fmt(row.floorTps, 0),
    fmt(row.floorPgCpuAtRate, 2),
    fmt(row.floorRatio, 2),
    row.replanned === null ? '–' : String(row.replanned),
    fmt(row.steal, 0),
    fmt(row.others, 0),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...table.map((r) => r[i].length)));
  const format = (cells) =>
    cells.map((cell, i) => (i < 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  log('');
  log(
    `${results.machine.cores} × ${results.machine.cpu_model}, Node ${results.machine.node}, PostgreSQL ${postgres.version}, ` +
      `PostGIS ${postgres.postgis}; ${settings.libraries} libraries; ${settings.duration} s per run after ${settings.warmup} s ` +
      `warm-up; ${settings.repeat} round(s), medians`,
  );
  log(format(header));
  log(format(widths.map((w) => '-'.repeat(w))));
  for (const cells of table) log(format(cells));
  const errors = rows.filter((row) => row.errors > 0);
  if (errors.length)
    log(
      `\n!! errors or non-2xx answers in: ${errors.map((r) => `${r.name}@${r.connections}`).join(', ')}`,
    );
  log(`\nceiling ${round(ceilingRps)} req/s; results in ${settings.out}`);
  log(`bench took ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

function fmt(value, digits = 1) {
  return value === null || value === undefined ? '–' : value.toFixed(digits);
}

let failed = false;
try {
  await main();
} catch (error) {
  failed = true;
  process.stderr.write(`\nbench: could not run: ${error instanceof Error ? error.stack : error}\n`);
} finally {
  await cleanup();
}
process.exit(failed ? 1 : 0);
