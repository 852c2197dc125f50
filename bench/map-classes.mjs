// The map feed's cost per class of request (issue 17): box size (city 0.3° × 0.2° / country 8° × 5°) × zoom band
// × filter, at whatever database the server reads. For each class: the statements a request sends (captured by the
// server, POST/GET /bench/capture) with EXPLAIN (ANALYZE, BUFFERS), and a short closed loop with the CPU of the
// server process and of the PostgreSQL backends of its database (as bench/map-cpu.mjs).
//
//   node bench/map-classes.mjs --port 3000 --server-pid 1234 --database bookcase_bench_… \
//     [--seconds 4] [--connections 4] [--explain 8] [--only city-13-15-none,…]
//
// Linux only (/proc). Start the built server as scripts/bench.mjs does (BENCH_CEILING_ROUTE=true).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cpuMs, databaseBackends } from './proc-cpu.mjs';
import pg from 'pg';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'server-pid': { type: 'string' },
    database: { type: 'string' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
    seconds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '4' },
    explain: { type: 'string', default: '8' },
    only: { type: 'string', default: '' },
  },
});
if (!args.port || !args['server-pid'] || !args.database) {
  process.stderr.write(
    'usage: node bench/map-classes.mjs --port P --server-pid PID --database NAME\n',
  );
  process.exit(2);
}
const { SEED_CITIES, seededRandom } = await import('../dist/src/cli/commands/seed-data.js');

// A fixed sequence of requests per class, so that two runs compare the same requests.
const SIZES = { city: [0.3, 0.2], country: [8, 5] };
const BANDS = { '5-8': [5, 8], '9-12': [9, 12], '13-15': [13, 15] };
const FILTERS = {
  none: () => '',
  country: (city) => `&country=${city.country}`,
  photo: () => '&has_photo=true',
  // A 4-character fragment of a postal code of the city (the bench draws 4-digit fragments of seeded codes).
  postal: (city, rnd) =>
    `&postal_code=${encodeURIComponent(
      city.postcode
        .replace(/#/g, () => String(Math.floor(rnd() * 10)))
        .replace(/@/g, () => String.fromCharCode(65 + Math.floor(rnd() * 26)))
        .slice(0, 4),
    )}`,
};
const classes = [];
for (const [size, [width, height]] of Object.entries(SIZES)) {
  for (const [band, [z0, z1]] of Object.entries(BANDS)) {
    for (const [filter, make] of Object.entries(FILTERS)) {
      const name = `${size}-${band}-${filter}`;
      if (args.only && !args.only.split(',').includes(name)) continue;
      const rnd = seededRandom([...name].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7));
      const paths = Array.from({ length: 200 }, () => {
        const city = SEED_CITIES[Math.floor(rnd() * SEED_CITIES.length)];
        const west = city.lng - width * rnd();
        const south = city.lat - height * rnd();
        const bbox = [west, south, west + width, south + height].map((v) => v.toFixed(5));
        const zoom = z0 + Math.floor(rnd() * (z1 - z0 + 1));
        return `/api/v1/libraries/map?bbox=${bbox.join(',')}&zoom=${zoom}${make(city, rnd)}`;
      });
      classes.push({ name, paths });
    }
  }
}

const backends = () => databaseBackends(args.database);

const agent = new Agent({ keepAlive: true });
function fetchPath(target, method = 'GET') {
  return new Promise((resolveGet, rejectGet) => {
    const req = request(
      { host: '127.0.0.1', port: Number(args.port), path: target, agent, method },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolveGet({ status: res.statusCode, body: Buffer.concat(chunks) }));
        res.on('error', rejectGet);
      },
    );
    req.on('error', rejectGet);
    req.end();
  });
}

const inline = (statement) =>
  statement.text.replace(/\$(\d+)/g, (_m, n) => {
    const value = statement.params[Number(n) - 1];
    return value === null ? 'NULL' : `'${value.replace(/'/g, "''")}'`;
  });
const sumBuffers = (node) => (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0);

const client = new pg.Client({ connectionString: `${args['database-url']}${args.database}` });
await client.connect();
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
};
const pid = Number(args['server-pid']);
process.stdout.write(
  'class                    | stmts | pg exec ms (median) | buffers (median) | features | bytes  | req/s | p50  | p99   | node CPU-ms | pg CPU-ms\n',
);
for (const { name, paths } of classes) {
  const execs = [];
  const buffers = [];
  const features = [];
  let statements = 0;
  for (const path of paths.slice(0, Number(args.explain))) {
    await fetchPath('/api/v1/bench/capture', 'POST');
    const { status, body } = await fetchPath(path);
    if (status === 200) features.push(JSON.parse(body.toString()).features.length);
    const { items } = JSON.parse((await fetchPath('/api/v1/bench/capture')).body.toString());
    statements += items.length;
    let exec = 0;
    let buf = 0;
    for (const item of items) {
      const { rows } = await client.query(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${inline(item)}`,
      );
      const [plan] = rows[0]['QUERY PLAN'];
      exec += plan['Execution Time'];
      buf += sumBuffers(plan.Plan);
    }
    execs.push(exec);
    buffers.push(buf);
  }
  // The closed loop.
  const pgPids = backends();
  const end = () => Date.now() + Number(args.seconds) * 1000;
  const latencies = [];
  let bytes = 0;
  let i = 0;
  const loop = async (until, record) => {
    await Promise.all(
      Array.from({ length: Number(args.connections) }, async () => {
        while (Date.now() < until) {
          const path = paths[i++ % paths.length];
          const started = performance.now();
          const { body } = await fetchPath(path);
          if (record) {
            latencies.push(performance.now() - started);
            bytes += body.length;
          }
        }
      }),
    );
  };
  await loop(Date.now() + 1000, false);
  const node0 = cpuMs(pid);
  const pg0 = pgPids.reduce((sum, p) => sum + cpuMs(p), 0);
  const started = Date.now();
  await loop(end(), true);
  const seconds = (Date.now() - started) / 1000;
  const n = latencies.length;
  const node = (cpuMs(pid) - node0) / n;
  const pgCpu = (pgPids.reduce((sum, p) => sum + cpuMs(p), 0) - pg0) / n;
  latencies.sort((a, b) => a - b);
  const q = (f) => latencies[Math.min(n - 1, Math.floor(f * n))];
  process.stdout.write(
    `${name.padEnd(24)} | ${(statements / Number(args.explain)).toFixed(1).padStart(5)} | ${median(execs).toFixed(2).padStart(19)} | ${String(median(buffers)).padStart(16)} | ${String(median(features)).padStart(8)} | ${String(Math.round(bytes / n)).padStart(6)} | ${(n / seconds).toFixed(0).padStart(5)} | ${q(0.5).toFixed(1).padStart(4)} | ${q(0.99).toFixed(1).padStart(5)} | ${node.toFixed(2).padStart(11)} | ${pgCpu.toFixed(2).padStart(9)}\n`,
  );
}
await client.end();
agent.destroy();
process.stdout.write(
  `load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
);
