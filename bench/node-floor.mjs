// The floor under issue 22's "node CPU-ms above the ceiling" for the list: what a bare `node:http` server pays for
// the list's work without NestJS, Express, guards, pino or the mapper. Two routes on one bare server:
//   /ceiling  the bench ceiling's body (20 fixed items, ~7 KB), JSON.stringify'd per request;
//   /list     the default list's statement exactly as the app sends it (prepared, through `pg`), its 20 rows
//             decoded and serialised (~14 KB).
// The difference between the two is the least a list can cost above the ceiling on this machine, whatever the
// framework: one round trip to PostgreSQL over loopback, decoding the rows, and the larger body.
//
//   node bench/node-floor.mjs --database bookcase_bench_… [--seconds 10] [--connections 10] [--server postgres://…]
//
// Linux only (/proc). Needs `npm run build` (it imports the built list-query.js and the ceiling's body).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    serve: { type: 'boolean', default: false },
  },
});
if (!args.database) {
  process.stderr.write(
    'usage: node bench/node-floor.mjs --database NAME [--seconds S] [--connections C]\n',
  );
  process.exit(2);
}
const url = `${args.server}/${args.database}`;

if (args.serve) {
  const { countAndPageQuery } = await import('../dist/src/libraries/list-query.js');
  const { CEILING_ITEMS } = await import('../dist/src/bench/bench.controller.js');
  const statement = countAndPageQuery({}, null, 20, 0);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const send = (res, body) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const server = createServer((req, res) => {
    if (req.url === '/ceiling') return send(res, JSON.stringify({ items: CEILING_ITEMS }));
    pool
      .query({ name: 'list', text: statement.text, values: statement.params })
      .then(({ rows }) => send(res, JSON.stringify({ items: rows, total: rows[0]?.total ?? 0 })))
      .catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
  });
  server.listen(0, '127.0.0.1', () => process.send?.(server.address().port));
} else {
  const child = fork(new URL(import.meta.url).pathname, [...process.argv.slice(2), '--serve']);
  const port = await new Promise((resolve) => child.once('message', resolve));
  const cpuMs = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  const run = async (path) => {
    const options = {
      url: `http://127.0.0.1:${port}${path}`,
      connections: Number(args.connections),
    };
    await autocannon({ ...options, duration: 2 });
    const before = cpuMs();
    const result = await autocannon({ ...options, duration: Number(args.seconds) });
    const cpu = (cpuMs() - before) / result.requests.total;
    return {
      path,
      reqs: result.requests.average,
      bytes: result.throughput.average / result.requests.average,
      cpu,
    };
  };
  const results = [];
  for (const path of ['/ceiling', '/list', '/ceiling', '/list']) results.push(await run(path));
  child.kill();
  for (const r of results)
    console.log(
      `${r.path.padEnd(9)} ${r.reqs.toFixed(0).padStart(6)} req/s  ${r.bytes.toFixed(0).padStart(6)} B/resp  node ${r.cpu.toFixed(3)} CPU-ms/req`,
    );
  const mean = (path) => results.filter((r) => r.path === path).reduce((s, r) => s + r.cpu, 0) / 2;
  console.log(
    `bare list above bare ceiling: ${(mean('/list') - mean('/ceiling')).toFixed(3)} node CPU-ms/req`,
  );
}
