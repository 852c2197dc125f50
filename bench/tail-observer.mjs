/**
 * A preload for the bench's server (issue 22, brief 22w): where each request's time goes on the server, to see what
 * the slowest 1 % waited for. Loaded with `NODE_OPTIONS="--import $PWD/bench/tail-observer.mjs" npm run bench --
 * --trace …`; it does nothing in any process but `dist/src/main.js`. Per request (the URL, start in epoch ms):
 *
 * - `total`: from Node's `request` event to the response's `finish` (what the server saw; the client's latency in
 *   `--trace` also holds the wait before Node read the request and after it wrote the answer);
 * - `poolWait`: summed waits for a pooled connection (pg-pool's `connect` to its callback), `checkouts`;
 * - `held`: summed time a pooled connection was checked out, and over those spans the backend's `/proc/PID/schedstat`:
 *   `beCpu` (on a CPU) and `beRunq` (runnable, waiting on a run queue); the rest of `held` the backend slept, i.e.
 *   waited for Node or the network;
 * - `mainCpu`, `mainRunq`: the same two of Node's main thread over the request's lifetime (shared with the requests
 *   in flight beside it: runq is time the whole event loop was descheduled).
 *
 * Also every garbage collection (start, duration, kind) and the event loop's delay per second. On exit it writes
 * `bench/tmp/tail-observer.json`; `bench/tail-split.mjs` joins it with the trace. Reading schedstat costs ~10 µs per
 * read (4 reads per request with one checkout), so CPU figures of an observed run are a little higher.
 *
 * `BENCH_POOL_SIZE=N` sets the server's DATABASE_POOL_SIZE (scripts/bench.mjs passes no DATABASE_* variable through).
 */
/* global setInterval */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';

if (/dist\/src\/main\.js$/.test(process.argv[1] ?? '')) {
  // A preload of the bench's server, not the app: it sets the setting before src/config reads it.
  // eslint-disable-next-line no-restricted-syntax
  const env = process.env;
  if (env.BENCH_POOL_SIZE) env.DATABASE_POOL_SIZE = env.BENCH_POOL_SIZE;
  const out = new URL('./tmp/tail-observer.json', import.meta.url);
  const origin = performance.timeOrigin;
  const als = new AsyncLocalStorage();
  const requests = [];

  /** [on CPU, waiting on a run queue] in ms, or null. */
  const schedstat = (path) => {
    try {
      const [cpu, runq] = readFileSync(path, 'latin1').split(' ');
      return [Number(cpu) / 1e6, Number(runq) / 1e6];
    } catch {
      return null;
    }
  };
  const mainPath = `/proc/self/task/${process.pid}/schedstat`;

  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, res) {
    if (event !== 'request') return emit.apply(this, arguments);
    const record = {
      url: req.url,
      at: origin + performance.now(),
      total: 0,
      checkouts: 0,
      poolWait: 0,
      held: 0,
      beCpu: 0,
      beRunq: 0,
      mainCpu: 0,
      mainRunq: 0,
    };
    const started = performance.now();
    const main = schedstat(mainPath);
    res.once('finish', () => {
      record.total = performance.now() - started;
      const after = schedstat(mainPath);
      if (main && after) {
        record.mainCpu = after[0] - main[0];
        record.mainRunq = after[1] - main[1];
      }
      requests.push(record);
    });
    return als.run(record, () => emit.apply(this, arguments));
  };

  // pg-pool as the app loads it (pg requires it from the same node_modules).
  const require = createRequire(new URL('../dist/src/main.js', import.meta.url));
  const Pool = require('pg-pool');
  const connect = Pool.prototype.connect;
  Pool.prototype.connect = function (cb) {
    const record = als.getStore();
    if (!record) return connect.call(this, cb);
    const asked = performance.now();
    let resolveP;
    let rejectP;
    const promise = cb
      ? undefined
      : new Promise((resolve, reject) => {
          resolveP = resolve;
          rejectP = reject;
        });
    connect.call(this, (error, client, release) => {
      if (error || !client) {
        if (cb) cb(error, client, release);
        else rejectP(error);
        return;
      }
      const got = performance.now();
      record.checkouts += 1;
      record.poolWait += got - asked;
      const path = `/proc/${client.processID}/schedstat`;
      const before = schedstat(path);
      const wrapped = (releaseError) => {
        record.held += performance.now() - got;
        const after = schedstat(path);
        if (before && after) {
          record.beCpu += after[0] - before[0];
          record.beRunq += after[1] - before[1];
        }
        return release(releaseError);
      };
      client.release = wrapped;
      if (cb) cb(undefined, client, wrapped);
      else resolveP(client);
    });
    return promise;
  };

  const gcs = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcs.push({ at: origin + entry.startTime, ms: entry.duration, kind: entry.detail?.kind });
    }
  }).observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const seconds = [];
  setInterval(() => {
    seconds.push({ at: Date.now(), maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 });
    delay.reset();
  }, 1000).unref();
  process.on('exit', () => {
    mkdirSync(new URL('./tmp/', import.meta.url), { recursive: true });
    writeFileSync(
      out,
      JSON.stringify({ poolSize: env.DATABASE_POOL_SIZE ?? null, requests, gcs, seconds }),
    );
  });
}
