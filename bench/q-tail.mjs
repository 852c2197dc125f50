#!/usr/bin/env node
/**
 * What makes a realistic scenario's tail (issue 22, brief 22c), from `npm run bench -- --trace FILE` (every answer:
 * URL, cold or warm, start, latency) and optionally the server's bench/loop-observer.mjs output (garbage collections,
 * event-loop delay per second):
 *
 *   node bench/q-tail.mjs --trace bench/tmp/trace.jsonl [--loop bench/tmp/loop.json] [--scenario q-words] [--top 15]
 *
 * Prints, per scenario and number of connections: throughput and mean latency (a closed loop: mean ≈ connections ÷
 * throughput when every request waits for the others), p50/p99 of warm and cold answers; for the slowest 1 % of warm
 * answers against all warm ones: how many cold requests were in flight beside them, the garbage collection time and
 * the event loop's worst delay within them; the slowest cold URLs; cold p99 by page depth.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    trace: { type: 'string' },
    loop: { type: 'string' },
    scenario: { type: 'string' },
    top: { type: 'string', default: '15' },
  },
});
if (!values.trace) throw new Error('--trace FILE is required');

const lines = readFileSync(values.trace, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line))
  .filter((a) => !values.scenario || a.scenario === values.scenario);
const answers = lines.filter((a) => !a.window);
const windows = lines.filter((a) => a.window);
const loop = values.loop ? JSON.parse(readFileSync(values.loop, 'utf8')) : null;

const pct = (sorted, p) =>
  sorted.length
    ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
    : NaN;
const mean = (values_) => {
  const xs = values_.filter(Number.isFinite);
  return xs.reduce((s, x) => s + x, 0) / (xs.length || 1);
};
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const pageOf = (path) => Number(new URL(path, 'http://x').searchParams.get('page') ?? 1);
const depth = (page) => (page === 1 ? '1' : page <= 4 ? '2-4' : '5-20');

/** Milliseconds of `intervals` ({at, ms}) within [from, to]. */
function overlapMs(intervals, from, to) {
  let total = 0;
  for (const i of intervals) {
    const lo = Math.max(from, i.at);
    const hi = Math.min(to, i.at + i.ms);
    if (hi > lo) total += hi - lo;
  }
  return total;
}

// Every scenario's window (autocannon's too): the server's event loop and garbage collection meanwhile.
if (loop) {
  for (const w of windows) {
    const [from, to] = w.window;
    const seconds = loop.seconds.filter((s) => s.at > from + 1000 && s.at <= to);
    const gcs = loop.gcs.filter((g) => g.at >= from && g.at <= to);
    const gcMs = gcs.reduce((s, g) => s + g.ms, 0);
    console.log(
      `${`${w.scenario} @${w.connections}`.padEnd(20)} event loop delay per second: max ${f(mean(seconds.map((s) => s.maxMs)))} ` +
        `p99 ${f(mean(seconds.map((s) => s.p99Ms)))} mean ${f(mean(seconds.map((s) => s.meanMs)), 2)} ms; GC ${gcs.length} ` +
        `collections, ${f((100 * gcMs) / (to - from))} % of the time, longest ${f(Math.max(0, ...gcs.map((g) => g.ms)))} ms`,
    );
  }
}

const groups = new Map();
for (const a of answers) {
  const key = `${a.scenario} @${a.connections}`;
  if (!groups.has(key)) groups.set(key, []);
  groups.get(key).push(a);
}

for (const [key, list] of groups) {
  list.sort((a, b) => a.at - b.at);
  const span = (Math.max(...list.map((a) => a.at + a.ms)) - list[0].at) / 1000;
  const warm = list.filter((a) => !a.cold);
  const cold = list.filter((a) => a.cold);
  const sorted = (xs) => xs.map((a) => a.ms).sort((x, y) => x - y);
  const [all, w, c] = [sorted(list), sorted(warm), sorted(cold)];
  console.log(
    `\n${key}: ${list.length} answers in ${f(span)} s = ${f(list.length / span, 0)} req/s; mean ${f(mean(all))} ms ` +
      `(connections ÷ throughput: ${f((list[0].connections * span * 1000) / list.length)} ms)`,
  );
  console.log(
    `  all p50 ${f(pct(all, 50))} p99 ${f(pct(all, 99))}; warm (${warm.length}) p50 ${f(pct(w, 50))} p90 ${f(pct(w, 90))} ` +
      `p99 ${f(pct(w, 99))} max ${f(w.at(-1))}; cold (${cold.length}, ${f((100 * cold.length) / list.length, 0)} %) ` +
      `p50 ${f(pct(c, 50))} p90 ${f(pct(c, 90))} p99 ${f(pct(c, 99))} max ${f(c.at(-1))}`,
  );
  // What ran beside each warm answer: cold requests in flight (time-weighted), GC, the loop's worst delay.
  const coldIntervals = cold.map((a) => ({ at: a.at, ms: a.ms }));
  const gcs = loop ? loop.gcs.map((g) => ({ at: g.at, ms: g.ms })) : [];
  const describe = (a) => {
    const beside = overlapMs(coldIntervals, a.at, a.at + a.ms) / a.ms;
    const gc = overlapMs(gcs, a.at, a.at + a.ms);
    const delays = loop
      ? loop.seconds.filter((s) => s.at >= a.at && s.at - 1000 <= a.at + a.ms).map((s) => s.maxMs)
      : [];
    return { beside, gc, delay: delays.length ? Math.max(...delays) : NaN };
  };
  const threshold = pct(w, 99);
  const slow = warm.filter((a) => a.ms >= threshold).map(describe);
  const every = warm.map(describe);
  const line = (name, xs) =>
    `  ${name.padEnd(22)} cold in flight ${f(mean(xs.map((x) => x.beside)), 2)}, GC ${f(mean(xs.map((x) => x.gc)), 2)} ms` +
    (loop ? `, loop delay max in its seconds ${f(mean(xs.map((x) => x.delay)))} ms` : '');
  console.log(line(`slowest 1 % warm (${slow.length})`, slow));
  console.log(line('all warm', every));
  if (loop) {
    const from = list[0].at;
    const to = from + span * 1000;
    const inRun = loop.gcs.filter((g) => g.at >= from && g.at <= to);
    const gcMs = inRun.reduce((s, g) => s + g.ms, 0);
    const big = inRun.filter((g) => g.ms >= 5).length;
    console.log(
      `  GC in the run: ${inRun.length} collections, ${f(gcMs)} ms (${f((100 * gcMs) / (span * 1000))} % of the time), ` +
        `${big} of 5 ms or more, longest ${f(Math.max(0, ...inRun.map((g) => g.ms)))} ms`,
    );
  }
  for (const d of ['1', '2-4', '5-20']) {
    const xs = sorted(cold.filter((a) => depth(pageOf(a.path)) === d));
    const ys = sorted(warm.filter((a) => depth(pageOf(a.path)) === d));
    console.log(
      `  page ${d.padEnd(4)}: cold ${String(xs.length).padStart(5)} p50 ${f(pct(xs, 50))} p99 ${f(pct(xs, 99))}; ` +
        `warm ${String(ys.length).padStart(5)} p50 ${f(pct(ys, 50))} p99 ${f(pct(ys, 99))}`,
    );
  }
  console.log(`  slowest cold:`);
  for (const a of [...cold].sort((x, y) => y.ms - x.ms).slice(0, Number(values.top)))
    console.log(
      `    ${f(a.ms).padStart(7)} ms  ${decodeURIComponent(a.path.replace(/^.*\?/, ''))}`,
    );
  console.log(`  slowest warm:`);
  for (const a of [...warm].sort((x, y) => y.ms - x.ms).slice(0, Math.min(8, Number(values.top))))
    console.log(
      `    ${f(a.ms).padStart(7)} ms  ${decodeURIComponent(a.path.replace(/^.*\?/, ''))}`,
    );
}
