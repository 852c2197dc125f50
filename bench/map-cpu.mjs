// The map scenarios' requests in a closed loop, with the CPU of the server process and of the PostgreSQL backends
// of its database only (the bench's PostgreSQL figure also counts the postmaster's reaped children, i.e. any other
// database's short-lived connections on a shared server). See bench/README.md, "Third session".
//
//   node bench/map-cpu.mjs --port 3000 --server-pid 1234 --database bookcase_bench_… \
//     [--scenario map-feed|tiles|ceiling] [--seconds 12] [--connections 10] [--query '&has_photo=true']
//
// Linux only (/proc). Start the built server as scripts/bench.mjs does (NODE_ENV=production, LOG_LEVEL=warn,
// RATE_LIMIT_ENABLED=false, BENCH_CEILING_ROUTE=true).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cpuMs, databaseBackends } from './proc-cpu.mjs';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'server-pid': { type: 'string' },
    database: { type: 'string' },
    scenario: { type: 'string', default: 'map-feed' },
    seconds: { type: 'string', default: '12' },
    connections: { type: 'string', default: '10' },
    query: { type: 'string', default: '' },
    // Print the N slowest requests of the measured run (path, ms, and when it started, ms into the run).
    slow: { type: 'string', default: '0' },
  },
});
if (!args.port || !args['server-pid'] || !args.database) {
  process.stderr.write(
    'usage: node bench/map-cpu.mjs --port P --server-pid PID --database NAME [...]\n',
  );
  process.exit(2);
}
const { SEED_CITIES } = await import('../dist/src/cli/commands/seed-data.js');

const backends = () => databaseBackends(args.database);

const pick = (list) => list[Math.floor(Math.random() * list.length)];
/** The same requests as scripts/bench.mjs's `ceiling`, `map-feed` and `tiles`. */
function path() {
  if (args.scenario === 'ceiling') return '/api/v1/bench/ceiling';
  const city = pick(SEED_CITIES);
  if (args.scenario === 'map-feed') {
    const [width, height] = Math.random() < 0.5 ? [0.3, 0.2] : [8, 5];
    const west = city.lng - width * Math.random();
    const south = city.lat - height * Math.random();
    const bbox = [west, south, west + width, south + height].map((v) => v.toFixed(5));
    const zoom = 5 + Math.floor(Math.random() * 11);
    return `/api/v1/libraries/map?bbox=${bbox.join(',')}&zoom=${zoom}${args.query}`;
  }
  const z = 3 + Math.floor(Math.random() * 14);
  const lng = city.lng + (Math.random() - 0.5) * 0.25;
  const lat = city.lat + (Math.random() - 0.5) * 0.18;
  const n = 2 ** z;
  const x = Math.floor(((lng + 180) / 360) * n);
  const y = Math.floor(
    (0.5 - Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360)) / (2 * Math.PI)) * n,
  );
  return `/api/v1/libraries/tiles/${z}/${x}/${y}.mvt`;
}

const agent = new Agent({ keepAlive: true });
/** One GET on a kept-alive connection: status and body length. */
function get(target) {
  return new Promise((resolveGet, rejectGet) => {
    const req = request(
      { host: '127.0.0.1', port: Number(args.port), path: target, agent },
      (res) => {
        let length = 0;
        res.on('data', (chunk) => (length += chunk.length));
        res.on('end', () => resolveGet({ status: res.statusCode, length }));
        res.on('error', rejectGet);
      },
    );
    req.on('error', rejectGet);
    req.end();
  });
}

async function run(ms) {
  const end = Date.now() + ms;
  const t0 = performance.now();
  const latencies = [];
  const requests = [];
  const statuses = {};
  let bytes = 0;
  await Promise.all(
    Array.from({ length: Number(args.connections) }, async () => {
      while (Date.now() < end) {
        const target = path();
        const started = performance.now();
        const { status, length } = await get(target);
        latencies.push(performance.now() - started);
        requests.push({ target, ms: performance.now() - started, at: started - t0, length });
        bytes += length;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { latencies, bytes, statuses, requests };
}

await run(3000);
const pid = Number(args['server-pid']);
const pgPids = backends();
const node0 = cpuMs(pid);
const pg0 = pgPids.reduce((sum, p) => sum + cpuMs(p), 0);
const started = Date.now();
const { latencies, bytes, statuses, requests } = await run(Number(args.seconds) * 1000);
const seconds = (Date.now() - started) / 1000;
const node1 = cpuMs(pid);
const pg1 = pgPids.reduce((sum, p) => sum + cpuMs(p), 0);
latencies.sort((a, b) => a - b);
const n = latencies.length;
const q = (f) => latencies[Math.min(n - 1, Math.floor(f * n))].toFixed(1);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
agent.destroy();
process.stdout.write(
  `${args.scenario}${args.query} ${(n / seconds).toFixed(1)} req/s  p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  ` +
    `${Math.round(bytes / n)} bytes/resp  node ${((node1 - node0) / n).toFixed(2)}  ` +
    `pg backends ${((pg1 - pg0) / n).toFixed(2)} CPU-ms/req  (${pgPids.length} backends, load ${load}, ` +
    `${JSON.stringify(statuses)})\n`,
);
for (const { target, ms, at, length } of requests
  .sort((a, b) => b.ms - a.ms)
  .slice(0, Number(args.slow))) {
  process.stdout.write(
    `${ms.toFixed(1).padStart(7)} ms at ${at.toFixed(0).padStart(6)} ms ${length} B ${target}\n`,
  );
}
