#!/usr/bin/env node
/**
 * The `list-filters` and `proximity-random` scenarios replayed statement by statement (issue 22, brief 22e): requests
 * drawn by scripts/bench.mjs's generators with a fixed seed, each read exactly as ApprovedListRepository reads it
 * (countAndPageQuery, the grid's statement when its total is NULL, the last page again when the requested one lay past
 * the end; named prepared statements where countAndPagePrepared says so), on one connection, with the backend's CPU
 * time of every request (/proc/PID/schedstat; the server must run on this machine) and its answer (total, effective
 * page, rows). Neither scenario touches the list memo (their counts come from aggregates or are never kept), so this
 * is what the route asks of PostgreSQL.
 *
 *   node bench/list-replay.mjs --database bench1m_e --scenario list-filters [--requests 1000] [--seed 7]
 *        [--passes 2] [--dist /work/wt-before/dist] [--answers out.json] [--json cpu.json] [--plan-cache auto|generic]
 *        [--top 15] [--server postgres://…/postgres]
 *
 * `--dist`: whose list-query.js builds the statements (another worktree's build: compare answers across builds with
 * two `--answers` files and `--compare a.json,b.json`). `--plan-cache generic`: the connection runs with
 * plan_cache_mode = force_generic_plan (every statement of both scenarios is prepared). Per pass it prints the CPU per request (mean, p50, p90, p99, max) split by whether
 * the request's statements were among the first five executions of their text on the connection (PostgreSQL plans
 * those with the values: custom plans) or later, and the worst requests.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    scenario: { type: 'string', default: 'list-filters' },
    requests: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '7' },
    passes: { type: 'string', default: '2' },
    dist: { type: 'string' },
    answers: { type: 'string' },
    json: { type: 'string' },
    compare: { type: 'string' },
    'plan-cache': { type: 'string', default: 'auto' },
    top: { type: 'string', default: '15' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});

if (values.compare) {
  const [a, b] = values.compare.split(',').map((file) => JSON.parse(readFileSync(file, 'utf8')));
  let differ = 0;
  let rows = 0;
  if (a.length !== b.length) throw new Error(`${a.length} answers against ${b.length}`);
  for (let i = 0; i < a.length; i += 1) {
    if (a[i].url !== b[i].url) throw new Error(`request ${i}: ${a[i].url} against ${b[i].url}`);
    rows += a[i].rows;
    if (a[i].total !== b[i].total || a[i].page !== b[i].page || a[i].digest !== b[i].digest) {
      differ += 1;
      if (differ <= 10) console.log('differs:', a[i], b[i]);
    }
  }
  console.log(`${a.length} answers (${rows} rows) compared: ${differ} differ`);
  process.exit(differ ? 1 : 0);
}
if (!values.database) throw new Error('--database NAME is required');

const dist = values.dist ?? new URL('../dist', import.meta.url).pathname;
const q = await import(`${dist}/src/libraries/list-query.js`);
const { SEED_CITIES } = await import(`${dist}/src/cli/commands/seed-data.js`);
const { pageWindow } = await import(`${dist}/src/common/pagination/pagination.js`);

/** mulberry32: the same requests on every run with the same seed. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(Number(values.seed));
const pick = (items) => items[Math.floor(random() * items.length)];

const url = new URL(values.server);
url.pathname = `/${values.database}`;
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query('SET jit = off');

// The bench's 200 postal fragments (first 4 digits of 5-digit codes), drawn here in a fixed order.
const fragments = (
  await client.query(
    `SELECT left(postal_code, 4) AS fragment FROM libraries
     WHERE status = 'approved' AND postal_code ~ '^[0-9]{5}$' ORDER BY hashtext(slug), id LIMIT 200`,
  )
).rows.map((row) => row.fragment);

// scripts/bench.mjs's realisticGenerators, with the seeded random numbers.
function realisticPage() {
  const r = random();
  if (r < 0.7) return 1;
  if (r < 0.9) return 2 + Math.floor(random() * 3);
  return 5 + Math.floor(random() * 16);
}
const pageOf = () => {
  const page = realisticPage();
  return page === 1 && random() < 0.5 ? {} : { page };
};
const countries = [...new Set(SEED_CITIES.map((c) => c.country))];
const lngs = SEED_CITIES.map((c) => c.lng);
const lats = SEED_CITIES.map((c) => c.lat);
const span = {
  west: Math.min(...lngs) - 1,
  east: Math.max(...lngs) + 1,
  south: Math.min(...lats) - 1,
  north: Math.max(...lats) + 1,
};
const generators = {
  'list-filters': () => {
    const city = pick(SEED_CITIES);
    return {
      country: ((r) => (r < 0.4 ? city.country : r < 0.5 ? pick(countries) : undefined))(random()),
      has_photo: random() < 0.3 ? String(random() < 0.7) : undefined,
      city: random() < 0.3 ? city.name.slice(0, 3 + Math.floor(random() * 5)) : undefined,
      postal_code:
        random() < 0.15 ? pick(fragments).slice(0, 2 + Math.floor(random() * 2)) : undefined,
      page_size: random() < 0.7 ? undefined : pick(['10', '50']),
      ...pageOf(),
    };
  },
  'proximity-random': () => {
    let lat;
    let lng;
    if (random() < 0.6) {
      const city = pick(SEED_CITIES);
      lat = city.lat + (random() - 0.5) * 0.9;
      lng = city.lng + (random() - 0.5) * 1.4;
    } else {
      lat = span.south + random() * (span.north - span.south);
      lng = span.west + random() * (span.east - span.west);
    }
    return {
      lat: lat.toFixed(5),
      lng: lng.toFixed(5),
      radius_km: random() < 0.75 ? String(pick([1, 2, 5, 10, 25, 50])) : undefined,
      ...pageOf(),
    };
  },
};
const generate = generators[values.scenario];
if (!generate) throw new Error(`--scenario: one of ${Object.keys(generators).join(', ')}`);

/** A request's query parameters as LibrariesService.list turns them into a search and a page. */
function toRequest(params) {
  const search = {
    city: params.city || undefined,
    country: params.country || undefined,
    postalCode: params.postal_code || undefined,
    hasPhoto: params.has_photo === undefined ? undefined : params.has_photo === 'true',
    near:
      params.lat !== undefined
        ? {
            lat: Number(params.lat),
            lng: Number(params.lng),
            radiusMeters:
              params.radius_km === undefined ? undefined : Number(params.radius_km) * 1000,
          }
        : undefined,
  };
  const urlText = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return {
    url: urlText,
    search,
    page: Number(params.page ?? 1),
    pageSize: Number(params.page_size ?? 20),
  };
}

const requests = Array.from({ length: Number(values.requests) }, () => toRequest(generate()));

const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
const cpuNs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
if (values['plan-cache'] !== 'auto')
  await client.query(`SET plan_cache_mode = force_${values['plan-cache']}_plan`);

const executions = new Map();
/** Whether the current request ran a statement at one of its first five executions on the connection. */
const current = { custom: false };
async function read(statement, prepared) {
  if (!prepared) return (await client.query(statement.text, statement.params)).rows;
  const name = `r_${createHash('sha1').update(statement.text).digest('base64url')}`;
  const n = (executions.get(name) ?? 0) + 1;
  executions.set(name, n);
  if (n <= 5) current.custom = true;
  return (await client.query({ name, text: statement.text, values: statement.params })).rows;
}

/** ApprovedListRepository.page for an anonymous reader (paginateTogether over countAndFind and find). */
async function answer({ search, page, pageSize }) {
  const prepared = q.countAndPagePrepared(search);
  const requestedOffset = (Math.max(1, page) - 1) * pageSize;
  let rows = await read(q.countAndPageQuery(search, null, pageSize, requestedOffset), prepared);
  if (rows[0].total === null) {
    const grid = q.circleGridCountAndPageQuery(search, null, pageSize, requestedOffset);
    rows = await read(grid, true);
  }
  const total = rows[0].total ?? 0;
  let items = rows.filter((row) => row.id !== null);
  const window = pageWindow(total, page, pageSize);
  if (total > 0 && window.offset !== requestedOffset)
    items = await read(q.pageQuery(search, null, window.pageSize, window.offset), prepared);
  if (total === 0) items = [];
  return { total, page: window.page, items };
}

const quantile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN;
const summary = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1);
  const f = (v) => v.toFixed(2);
  return `n ${sorted.length} mean ${f(mean)} p50 ${f(quantile(sorted, 0.5))} p90 ${f(quantile(sorted, 0.9))} p99 ${f(quantile(sorted, 0.99))} max ${f(sorted.at(-1) ?? NaN)} sum ${f(mean * sorted.length)}`;
};

const out = [];
let answers = [];
for (let pass = 1; pass <= Number(values.passes); pass += 1) {
  const measured = [];
  answers = [];
  for (const request of requests) {
    current.custom = false;
    const before = cpuNs();
    const started = performance.now();
    const result = await answer(request);
    const wall = performance.now() - started;
    const cpu = (cpuNs() - before) / 1e6;
    measured.push({ url: request.url, cpu, wall, custom: current.custom, total: result.total });
    answers.push({
      url: request.url,
      total: result.total,
      page: result.page,
      rows: result.items.length,
      digest: createHash('sha1').update(JSON.stringify(result.items)).digest('base64url'),
    });
  }
  console.log(`pass ${pass} (${values['plan-cache']}):`);
  console.log(`  all      cpu ${summary(measured.map((m) => m.cpu))}`);
  console.log(`  all      wall ${summary(measured.map((m) => m.wall))}`);
  console.log(`  custom   cpu ${summary(measured.filter((m) => m.custom).map((m) => m.cpu))}`);
  console.log(`  later    cpu ${summary(measured.filter((m) => !m.custom).map((m) => m.cpu))}`);
  for (const m of [...measured].sort((a, b) => b.cpu - a.cpu).slice(0, Number(values.top)))
    console.log(
      `    ${m.cpu.toFixed(2).padStart(7)} cpu ${m.wall.toFixed(1).padStart(7)} wall  total ${String(m.total).padStart(7)}${m.custom ? ' (custom)' : ''}  ${m.url}`,
    );
  out.push({ pass, measured });
  console.log(`  ${executions.size} prepared statement texts`);
}
if (values.answers) writeFileSync(values.answers, JSON.stringify(answers));
if (values.json) writeFileSync(values.json, JSON.stringify(out));
await client.end();
