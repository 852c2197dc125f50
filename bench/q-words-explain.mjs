#!/usr/bin/env node
/**
 * The `q-words` scenario's statements one by one (issue 22, brief 22w): for every word of scripts/bench.mjs's Q_WORDS
 * and pages 1, 2, 5, 10, 20 (20 per page), the app's exact first statement of a list (`countAndPageQuery` from
 * dist/src/libraries/list-query.js: the count and the page) under EXPLAIN (ANALYZE, BUFFERS), printed worst first (by CPU).
 *
 *   node bench/q-words-explain.mjs --database bench1m_w [--warm] [--pages 1,2,5,10,20] [--words 'köln,town hall']
 *                                  [--page-ids] [--json bench/tmp/qx.json] [--server postgres://…/postgres]
 *
 * Cold (the default): before each statement, shared_buffers are filled with an unrelated relation (pg_prewarm of
 * libraries_search_text_trgm_idx, larger than shared_buffers; the extension is created in that database if missing),
 * so every page of `libraries` and its indexes the statement needs is read again (from the OS cache: this cannot
 * drop the kernel's). `--warm`: the statement is run once first and the second run is measured.
 * `--page-ids`: the memo's page statement (`pageIdsQuery`, no total) instead.
 *
 * Columns: buffers (shared hit + read), read (of those, not in shared_buffers), tuples (rows that scan nodes
 * produced or removed by a filter, times loops: the index entries and heap rows visited; not those of a function such
 * as bookcase_search_walk, whose buffers are counted), from EXPLAIN (ANALYZE,
 * BUFFERS, TIMING OFF); cpu ms: the backend's CPU time (/proc/PID/schedstat; the server must run on this machine)
 * for the statement itself, sent as the app sends it (parse, plan, execute), in the same state (cold: evicted again
 * first). CPU time holds under the shared machine's load where wall time does not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    warm: { type: 'boolean', default: false },
    pages: { type: 'string', default: '1,2,5,10,20' },
    words: { type: 'string' },
    'page-ids': { type: 'boolean', default: false },
    json: { type: 'string' },
    top: { type: 'string', default: '40' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
if (!values.database) throw new Error('--database NAME is required');

const root = new URL('..', import.meta.url).pathname;
const { countAndPageQuery, pageIdsQuery } = await import(
  new URL('../dist/src/libraries/list-query.js', import.meta.url).href
);
const benchSource = readFileSync(`${root}scripts/bench.mjs`, 'utf8');
const listText = /const Q_WORDS = \[([\s\S]*?)\];/.exec(benchSource)?.[1];
if (!listText) throw new Error('Q_WORDS not found in scripts/bench.mjs');
const allWords = [...listText.matchAll(/'([^']*)'/g)].map((m) => m[1]);
const words = values.words ? values.words.split(',') : allWords;
const pages = values.pages.split(',').map(Number);
const PAGE_SIZE = 20;

const url = new URL(values.server);
url.pathname = `/${values.database}`;
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query('SET jit = off');
if (!values.warm) await client.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
const cpuNs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
const evict = () => client.query(`SELECT pg_prewarm('libraries_search_text_trgm_idx')`);

function walk(node, totals) {
  const loops = node['Actual Loops'] ?? 1;
  if (
    /Scan/.test(node['Node Type']) &&
    !/Subquery|CTE|Function|Values|Result/.test(node['Node Type'])
  ) {
    totals.tuples +=
      ((node['Actual Rows'] ?? 0) +
        (node['Rows Removed by Filter'] ?? 0) +
        (node['Rows Removed by Index Recheck'] ?? 0)) *
      loops;
  }
  for (const child of node.Plans ?? []) walk(child, totals);
  return totals;
}

const results = [];
for (const word of words) {
  for (const page of pages) {
    const offset = (page - 1) * PAGE_SIZE;
    const statement = values['page-ids']
      ? pageIdsQuery({ q: word }, PAGE_SIZE, offset)
      : countAndPageQuery({ q: word }, null, PAGE_SIZE, offset);
    const explain = `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${statement.text}`;
    if (values.warm) await client.query(statement.text, statement.params);
    else await evict();
    const before = cpuNs();
    await client.query(statement.text, statement.params);
    const cpuMs = (cpuNs() - before) / 1e6;
    if (!values.warm) await evict();
    const [
      {
        'QUERY PLAN': [plan],
      },
    ] = (await client.query(explain, statement.params)).rows;
    const top = plan.Plan;
    const totals = walk(top, { tuples: 0 });
    const hit = top['Shared Hit Blocks'] ?? 0;
    const read = top['Shared Read Blocks'] ?? 0;
    results.push({
      word,
      page,
      buffers: hit + read,
      read,
      tuples: totals.tuples,
      cpuMs,
      planMs: plan['Planning Time'],
      execMs: plan['Execution Time'],
      rows: top['Actual Rows'],
    });
  }
}
await client.end();

results.sort((a, b) => b.cpuMs - a.cpuMs);
const sum = (key) => results.reduce((s, r) => s + r[key], 0);
const pad = (v, n) => String(v).padStart(n);
console.log(
  `${values.warm ? 'warm' : 'cold'}, ${values['page-ids'] ? 'pageIdsQuery' : 'countAndPageQuery'}, ${results.length} statements; ` +
    `cpu ${sum('cpuMs').toFixed(1)} ms, buffers ${sum('buffers')}, read ${sum('read')}, tuples ${sum('tuples')}, ` +
    `exec ${sum('execMs').toFixed(1)} ms, plan ${sum('planMs').toFixed(1)} ms (EXPLAIN, no timing)`,
);
console.log(
  `${'q'.padEnd(24)} ${pad('page', 4)} ${pad('cpu ms', 7)} ${pad('buffers', 8)} ${pad('read', 7)} ${pad('tuples', 8)} ${pad('plan ms', 8)} ${pad('exec ms', 8)}`,
);
for (const r of results.slice(0, Number(values.top))) {
  console.log(
    `${r.word.padEnd(24)} ${pad(r.page, 4)} ${pad(r.cpuMs.toFixed(2), 7)} ${pad(r.buffers, 8)} ${pad(r.read, 7)} ${pad(r.tuples, 8)} ${pad(r.planMs.toFixed(2), 8)} ${pad(r.execMs.toFixed(2), 8)}`,
  );
}
if (values.json) writeFileSync(values.json, `${JSON.stringify(results, null, 1)}\n`);
