#!/usr/bin/env node
/**
 * The `list-filters` and `proximity-random` scenarios replayed statement by statement (issue 22, brief 22e): requests
 * drawn by scripts/bench.mjs's generators with a fixed seed, each answered by the build's own ApprovedListRepository
 * (its statements, prepared or not, in its order) on one connection, with the backend's CPU time of every request
 * (/proc/PID/schedstat; the server must run on this machine) and its answer (total, effective page, rows). Neither
 * scenario is served from the list memo (their counts come from aggregates or are never kept), so this is what the
 * route asks of PostgreSQL.
 *
 *   node bench/list-replay.mjs --database bench1m_e --scenario list-filters [--requests 1000] [--seed 7]
 *        [--passes 2] [--dist /work/wt-before/dist] [--answers out.json] [--json cpu.json] [--plan-cache auto|generic]
 *        [--top 15] [--server postgres://…/postgres]
 *
 * `--explain 'country=ES&has_photo=false&page=16'`: instead, each statement of that one request under EXPLAIN
 * (ANALYZE, BUFFERS) on its generic plan (PREPARE, then EXPLAIN EXECUTE with plan_cache_mode = force_generic_plan).
 *
 * `--dist`: whose build answers (another worktree's dist; compare answers across builds with two `--answers` files
 * and `--compare a.json,b.json`). `--plan-cache generic`: the connection runs with plan_cache_mode =
 * force_generic_plan whatever the build asks (default: as the build asks). Per pass it prints the CPU per request
 * (mean, p50, p90, p99, max) split by whether the request's statements were among the first five executions of their
 * text on the connection (PostgreSQL plans those with the values unless told otherwise: custom plans) or later, and
 * the worst requests.
 *
 * `--http http://127.0.0.1:A,http://127.0.0.1:B`: instead, the same requests sent to two running servers (GET
 * /api/v1/libraries/?…), whose response bodies must be equal (items, every field, in order, and pagination).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { listParamGenerators } from './realistic-requests.mjs';

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
    explain: { type: 'string' },
    'no-timing': { type: 'boolean', default: false },
    http: { type: 'string' },
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
await import('reflect-metadata');
const { ApprovedListRepository } = await import(
  `${dist}/src/libraries/approved-list.repository.js`
);
const { Clock } = await import(`${dist}/src/common/clock.js`);
const { PreparedRead } = await import(`${dist}/src/database/prepared-reader.js`);
const { SEED_CITIES } = await import(`${dist}/src/cli/commands/seed-data.js`);

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

// What scripts/bench.mjs sends, drawn with the seeded random numbers.
const generators = listParamGenerators(SEED_CITIES, fragments, random);
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
    query: Object.entries(params)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&'),
    search,
    page: Number(params.page ?? 1),
    pageSize: Number(params.page_size ?? 20),
  };
}

if (values.explain) {
  const params = Object.fromEntries(new URLSearchParams(values.explain));
  await client.query('SET plan_cache_mode = force_generic_plan');
  const literal = (value) =>
    value === null || value === undefined
      ? 'NULL'
      : `'${(Array.isArray(value) ? `{${value.join(',')}}` : String(value)).replace(/'/g, "''")}'`;
  let n = 0;
  const explainRead = async (text, params) => {
    const statement = { text, params };
    n += 1;
    await client.query(`PREPARE x${n} AS ${statement.text}`);
    const { rows } = await client.query(
      `EXPLAIN (ANALYZE, BUFFERS${values['no-timing'] ? ', TIMING OFF' : ''}) EXECUTE x${n}(${statement.params.map(literal).join(', ')})`,
    );
    console.log(rows.map((row) => row['QUERY PLAN']).join('\n'));
    const result = await client.query(`EXECUTE x${n}(${statement.params.map(literal).join(', ')})`);
    return result.rows;
  };
  const { search, page, pageSize } = toRequest(params);
  await new ApprovedListRepository({ read: explainRead }, new Clock()).page(search, null, {
    page,
    page_size: pageSize,
  });
  await client.end();
  process.exit(0);
}

const requests = Array.from({ length: Number(values.requests) }, () => toRequest(generate()));

if (values.http) {
  const bases = values.http.split(',');
  let differ = 0;
  let rows = 0;
  for (const { query } of requests) {
    const bodies = await Promise.all(
      bases.map(async (base) => {
        const res = await globalThis.fetch(`${base}/api/v1/libraries/?${query}`);
        return `${res.status} ${await res.text()}`;
      }),
    );
    rows += (JSON.parse(bodies[0].slice(4)).items ?? []).length;
    if (bodies[0] !== bodies[1]) {
      differ += 1;
      if (differ <= 5)
        console.log(
          `differs: ${query}\n  ${bodies[0].slice(0, 300)}\n  ${bodies[1].slice(0, 300)}`,
        );
    }
  }
  console.log(`${requests.length} responses (${rows} items) compared: ${differ} differ`);
  await client.end();
  process.exit(differ ? 1 : 0);
}

const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
const cpuNs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
if (values['plan-cache'] !== 'auto')
  await client.query(`SET plan_cache_mode = force_${values['plan-cache']}_plan`);

const executions = new Map();
/** Whether the current request ran a statement at one of its first five executions on the connection. */
const current = { custom: false };
/**
 * The build's own ApprovedListRepository reads through this PreparedReader stand-in on the replay's connection: with
 * the build's PreparedRead (named after the text; a `generic` read as the build sends it), others unnamed.
 */
const shapes = new Map();
const reader = {
  async read(text, params, prepared = true) {
    if (!prepared) return (await client.query(text, params)).rows;
    const digest = createHash('sha1').update(text).digest('base64url');
    const name = `r_${digest}`;
    const n = (executions.get(name) ?? 0) + 1;
    executions.set(name, n);
    if (n <= 5) current.custom = true;
    if (!shapes.has(text)) shapes.set(text, { digest, shape: null });
    const generic = prepared === 'generic' && values['plan-cache'] === 'auto' ? 'r_generic' : null;
    return new Promise((resolve, reject) =>
      client.query(
        new PreparedRead(
          name,
          text,
          params,
          shapes.get(text),
          (error, result) => (error ? reject(error) : resolve(result.rows)),
          generic,
        ),
      ),
    );
  },
};
const repository = new ApprovedListRepository(reader, new Clock());

/** ApprovedListRepository.page for an anonymous reader. */
async function answer({ search, page, pageSize }) {
  const result = await repository.page(search, null, { page, page_size: pageSize });
  return { total: result.pagination.total, page: result.pagination.page, items: result.items };
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
