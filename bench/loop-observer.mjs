/**
 * A preload for the bench's server (issue 22, brief 22c): what stalls Node's event loop during a run. Loaded with
 * `NODE_OPTIONS="--import $PWD/bench/loop-observer.mjs" npm run bench -- --trace …`; it does nothing in any process
 * but `dist/src/main.js`. On exit it writes `bench/tmp/loop-observer.json`: every garbage collection (epoch ms, kind,
 * duration) and the event loop's delay per second (max and p99, from perf_hooks' histogram at 1 ms resolution), so
 * a slow request in `--trace` can be matched with what the server did meanwhile (bench/q-tail.mjs).
 */
/* global setInterval */
import { mkdirSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';

if (/dist\/src\/main\.js$/.test(process.argv[1] ?? '')) {
  const out = new URL('./tmp/loop-observer.json', import.meta.url);
  const gcs = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcs.push({
        at: performance.timeOrigin + entry.startTime,
        ms: entry.duration,
        kind: entry.detail?.kind,
      });
    }
  }).observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const seconds = [];
  setInterval(() => {
    seconds.push({
      at: Date.now(),
      maxMs: delay.max / 1e6,
      p99Ms: delay.percentile(99) / 1e6,
      meanMs: delay.mean / 1e6,
    });
    delay.reset();
  }, 1000).unref();
  const write = () => {
    mkdirSync(new URL('./tmp/', import.meta.url), { recursive: true });
    writeFileSync(out, JSON.stringify({ gcs, seconds }));
  };
  process.on('exit', write);
}
