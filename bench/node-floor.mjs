// The floor under issue 22's "node CPU-ms above the ceiling": what a bare `node:http` server pays for a route's work
// without NestJS, Express, guards, pino or the mapper. One bare server (a child process, so its CPU is its own):
//   /ceiling       the bench ceiling's body (20 fixed items, ~7 KB), JSON.stringify'd per request;
//   /s/<scenario>  one request's statements exactly as the app sent them (captured by the app's /bench/capture:
//                  text, parameters in pg's text form, prepared or not), run one after the other through a `pg`
//                  pool of 10, their rows decoded and serialised as `{items, total}`; a request with a bearer token
//                  first has its HS256 signature and expiry checked with node:crypto (the least a signed-in read
//                  costs before its session lookup, which is one of the captured statements).
// The difference between a scenario and /ceiling is the least that route can cost above the ceiling on this machine,
// whatever the framework: its round trips to PostgreSQL over loopback, decoding the rows, the larger body.
//
// scripts/bench.mjs runs it for `list`, `list-auth`, `detail` and `favourites` and prints it beside the route
// ("node floor above ceiling"). Standalone, for the default list (needs `npm run build`):
//
//   node bench/node-floor.mjs --database bookcase_bench_… [--seconds 10] [--connections 10] [--server postgres://…]
//
// Linux only (/proc).
import { fork } from 'node:child_process';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuMs } from './proc-cpu.mjs';

const SELF = fileURLToPath(import.meta.url);

/** Checks an HS256 JWT's signature and `exp` (the checks the app's passport-jwt strategy makes before its lookup). */
function verifyJwt(token, secret) {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return false;
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  return typeof claims.exp === 'number' && claims.exp > Date.now() / 1000;
}

/** The bare server (child side): answers until killed; scenarios' statements arrive over IPC. */
async function serve({ url, secret }) {
  const { CEILING_ITEMS } = await import('../dist/src/bench/bench.controller.js');
  const pool = new pg.Pool({ connectionString: url, max: 10, options: '-c jit=off' });
  const groups = new Map();
  const names = new Map();
  const nameOf = (text) => {
    let name = names.get(text);
    if (name === undefined) {
      name = `floor_${createHash('sha1').update(text).digest('base64url')}`;
      names.set(text, name);
    }
    return name;
  };
  process.on('message', (message) => {
    if (message.scenario === undefined) return;
    groups.set(message.scenario, message.groups);
    process.send?.({ ready: message.scenario });
  });
  const send = (res, status, body) => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const run = async (group) => {
    let rows = [];
    for (const statement of group) {
      const result = statement.prepared
        ? await pool.query({
            name: nameOf(statement.text),
            text: statement.text,
            values: statement.params,
          })
        : await pool.query(statement.text, statement.params);
      rows = result.rows;
    }
    return rows;
  };
  const server = createServer((req, res) => {
    if (req.url === '/ceiling') return send(res, 200, JSON.stringify(CEILING_ITEMS));
    const scenario = groups.get(req.url.slice('/s/'.length));
    if (!scenario) return send(res, 404, '{}');
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer !== undefined && !(secret && verifyJwt(bearer, secret))) return send(res, 401, '{}');
    run(scenario[Math.floor(Math.random() * scenario.length)])
      .then((rows) => send(res, 200, JSON.stringify({ items: rows, total: rows[0]?.total ?? 0 })))
      .catch((error) => send(res, 500, JSON.stringify({ message: String(error) })));
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
}

/**
 * Starts the bare server in a child process. `setScenario(name, groups)` gives it a scenario's captured requests
 * (arrays of statements); `measure(path, …)` drives it with autocannon and returns req/s and its CPU-ms per request.
 */
export async function startFloorServer({ url, secret = '' }) {
  // The URL and the JWT secret go over IPC, not on the command line (where `ps` shows them).
  const child = fork(SELF, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.send({ url, secret });
  const next = (key) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message[key] === undefined) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message[key]);
      };
      const onExit = (code) => reject(new Error(`node floor server exited (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const port = await next('port');
  return {
    pid: child.pid,
    async setScenario(scenario, groups) {
      const ready = next('ready');
      child.send({ scenario, groups });
      await ready;
    },
    async measure(path, { connections, seconds, warmup, headers = {} }) {
      const options = { url: `http://127.0.0.1:${port}${path}`, connections, headers };
      if (warmup > 0) await autocannon({ ...options, duration: warmup });
      const before = cpuMs(child.pid);
      const result = await autocannon({ ...options, duration: seconds });
      const ok = result['2xx'];
      return {
        rps: ok / seconds,
        bytes: ok ? result.throughput.total / ok : null,
        cpu: ok ? (cpuMs(child.pid) - before) / ok : null,
        errors: result.errors + result.timeouts + result.non2xx,
      };
    },
    stop() {
      child.kill();
    },
  };
}

if (process.argv[1] === SELF) {
  const { values: args } = parseArgs({
    options: {
      database: { type: 'string' },
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '10' },
      server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
      serve: { type: 'boolean', default: false },
    },
  });
  if (args.serve) {
    process.once('message', (config) => void serve(config));
  } else {
    if (!args.database) {
      process.stderr.write(
        'usage: node bench/node-floor.mjs --database NAME [--seconds S] [--connections C]\n',
      );
      process.exit(2);
    }
    const { countAndPageQuery } = await import('../dist/src/libraries/list-query.js');
    const { text, params } = countAndPageQuery({}, null, 20, 0);
    const floor = await startFloorServer({ url: `${args.server}/${args.database}` });
    await floor.setScenario('list', [[{ text, params, prepared: true }]]);
    const settings = { connections: Number(args.connections), seconds: Number(args.seconds) };
    const results = [];
    for (const path of ['/ceiling', '/s/list', '/ceiling', '/s/list'])
      results.push({ path, ...(await floor.measure(path, { ...settings, warmup: 2 })) });
    floor.stop();
    for (const r of results)
      console.log(
        `${r.path.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} req/s  ${r.bytes.toFixed(0).padStart(6)} B/resp  node ${r.cpu.toFixed(3)} CPU-ms/req`,
      );
    const mean = (path) =>
      results.filter((r) => r.path === path).reduce((s, r) => s + r.cpu, 0) / 2;
    console.log(
      `bare list above bare ceiling: ${(mean('/s/list') - mean('/ceiling')).toFixed(3)} node CPU-ms/req`,
    );
  }
}
