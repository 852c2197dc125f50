#!/usr/bin/env node
/**
 * Where the slowest requests' time went (issue 22, brief 22w): joins bench/tail-observer.mjs's per-request record
 * (bench/tmp/tail-observer.json) with a `--trace` file of the same run (the client's latency of every answer) and
 * prints, per closed-loop scenario and for all answers, the slowest 1 % (by the client's latency) and the fastest
 * half, the mean of each part in ms:
 *
 *   client     the latency the bench measured
 *   outside    client − server total: before Node read the request (event loop busy or descheduled) and after it
 *              wrote the answer, plus the bench client's own scheduling
 *   node       server total − pool wait − connection held: Node's work on the request and its waits for the event loop
 *   checkouts  pooled connections taken (one per statement or transaction)
 *   poolWait   waiting for a pooled connection
 *   be cpu / be runq / be sleep   while the connection was held: the backend on a CPU, runnable but waiting for one,
 *              and asleep (waiting for Node to send or read, or the network)
 *   main runq  Node's main thread runnable but not running during the request (the whole loop descheduled)
 *   gc         garbage collection pauses overlapping the request
 *   inflight   requests in flight on the server when it started
 *
 *   node bench/tail-split.mjs --trace bench/tmp/trace.jsonl [--observer bench/tmp/tail-observer.json]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    trace: { type: 'string' },
    observer: {
      type: 'string',
      default: new URL('./tmp/tail-observer.json', import.meta.url).pathname,
    },
    json: { type: 'boolean', default: false },
  },
});
if (!values.trace)
  throw new Error('--trace FILE (the bench run that loaded bench/tail-observer.mjs)');

const observed = JSON.parse(readFileSync(values.observer, 'utf8'));
const lines = readFileSync(values.trace, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));

// Server records by URL, in start order, to match with the client's answers.
const byUrl = new Map();
for (const record of observed.requests) {
  const key = record.url.replace(/^\/api\/v1/, '');
  if (!byUrl.has(key)) byUrl.set(key, []);
  byUrl.get(key).push(record);
}
const starts = observed.requests.map((r) => r.at).sort((a, b) => a - b);
const ends = observed.requests.map((r) => r.at + r.total).sort((a, b) => a - b);
const countBelow = (sorted, value) => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};
const gcs = observed.gcs.sort((a, b) => a.at - b.at);
const gcWithin = (from, to) => {
  let ms = 0;
  for (
    let i = countBelow(
      gcs.map((g) => g.at),
      from - 1000,
    );
    i < gcs.length && gcs[i].at < to;
    i += 1
  ) {
    const g = gcs[i];
    const overlap = Math.min(to, g.at + g.ms) - Math.max(from, g.at);
    if (overlap > 0) ms += overlap;
  }
  return ms;
};

const scenarios = new Map();
for (const line of lines) {
  if (line.window) continue;
  const key = `${line.scenario} c=${line.connections}`;
  if (!scenarios.has(key)) scenarios.set(key, []);
  const current = scenarios.get(key);
  const path = line.path.replace(/^\/api\/v1/, '');
  const candidates = byUrl.get(path) ?? [];
  // The server record of this answer: same URL, started within the client's span.
  let best = null;
  for (const record of candidates) {
    if (record.used) continue;
    if (record.at >= line.at - 2 && record.at + record.total <= line.at + line.ms + 2) {
      best = record;
      break;
    }
  }
  if (!best) continue;
  best.used = true;
  current.push({
    client: line.ms,
    cold: line.cold,
    total: best.total,
    outside: line.ms - best.total,
    node: best.total - best.poolWait - best.held,
    checkouts: best.checkouts,
    poolWait: best.poolWait,
    beCpu: best.beCpu,
    beRunq: best.beRunq,
    beSleep: best.held - best.beCpu - best.beRunq,
    mainRunq: best.mainRunq,
    gc: gcWithin(best.at, best.at + best.total),
    inflight: countBelow(starts, best.at) - countBelow(ends, best.at),
  });
}

const parts = [
  'client',
  'outside',
  'node',
  'checkouts',
  'poolWait',
  'beCpu',
  'beRunq',
  'beSleep',
  'mainRunq',
  'gc',
  'inflight',
];
const mean = (rows, part) => rows.reduce((sum, row) => sum + row[part], 0) / (rows.length || 1);
const report = {};
for (const [key, rows] of scenarios) {
  rows.sort((a, b) => a.client - b.client);
  const slow = rows.slice(Math.floor(rows.length * 0.99));
  const fast = rows.slice(0, Math.floor(rows.length / 2));
  const groups = { 'slowest 1%': slow, all: rows, 'fastest 50%': fast };
  report[key] = { matched: rows.length, p99: rows[Math.floor(rows.length * 0.99)]?.client };
  process.stdout.write(
    `\n${key}: ${rows.length} answers matched, p99 ${report[key].p99?.toFixed(1)} ms\n` +
      `${'group'.padEnd(12)}${parts.map((p) => p.padStart(10)).join('')}\n`,
  );
  for (const [name, group] of Object.entries(groups)) {
    report[key][name] = Object.fromEntries(parts.map((p) => [p, mean(group, p)]));
    process.stdout.write(
      `${name.padEnd(12)}${parts.map((p) => mean(group, p).toFixed(2).padStart(10)).join('')}\n`,
    );
  }
}
const loop = observed.seconds.map((s) => s.maxMs).sort((a, b) => a - b);
const gcShare =
  observed.gcs.reduce((sum, g) => sum + g.ms, 0) /
  ((observed.seconds.at(-1)?.at ?? 0) - (observed.seconds[0]?.at ?? 0) || 1);
process.stdout.write(
  `\nloop delay max per second: median ${loop[loop.length >> 1]?.toFixed(1)} ms, ` +
    `p90 ${loop[Math.floor(loop.length * 0.9)]?.toFixed(1)} ms; GC ${observed.gcs.length} pauses, ` +
    `${(100 * gcShare).toFixed(1)} % of the run; pool size ${observed.poolSize ?? 'default'}\n`,
);
if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
