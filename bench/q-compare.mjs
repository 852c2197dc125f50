#!/usr/bin/env node
/**
 * Proves that two builds of list-query.ts answer `q` lists identically (issue 22, brief 22c): for every word of
 * scripts/bench.mjs's Q_WORDS × pages × filter sets, the count-and-page statement (`countAndPageQuery`: total, ids in
 * order, whole rows) and the memo's page ids (`pageIdsQuery`, through textPageWindow's window where the build has
 * it, as the repository reads them) of each build, run on the same database, each prepared as the app prepares it (`countAndPagePrepared`; the generic plan after five executions answers too).
 *
 *   node bench/q-compare.mjs --database bench1m_c --before /work/wt-c-before [--pages 1,2,5,10,20]
 *                            [--filters 'alone;country=DE;country=GB;has_photo=true'] [--words 'köln,koln']
 *
 * Prints each difference and a summary line; exits 1 when anything differs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    before: { type: 'string' },
    pages: { type: 'string', default: '1,2,5,10,20' },
    filters: { type: 'string', default: 'alone;country=DE;country=GB' },
    words: { type: 'string' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
if (!values.database || !values.before)
  throw new Error('--database NAME and --before DIR are required');

const root = new URL('..', import.meta.url).pathname;
const after = await import(new URL('../dist/src/libraries/list-query.js', import.meta.url).href);
const before = await import(`${values.before.replace(/\/$/, '')}/dist/src/libraries/list-query.js`);
const listText = /const Q_WORDS = \[([\s\S]*?)\];/.exec(
  readFileSync(`${root}scripts/bench.mjs`, 'utf8'),
)?.[1];
if (!listText) throw new Error('Q_WORDS not found in scripts/bench.mjs');
const words = values.words
  ? values.words.split(',')
  : [...listText.matchAll(/'([^']*)'/g)].map((m) => m[1]);
const pages = values.pages.split(',').map(Number);
const filterSets = values.filters.split(';').map((text) => {
  const search = {};
  if (text === 'alone') return search;
  for (const pair of text.split('&')) {
    const [key, value] = pair.split('=');
    if (key === 'country') search.country = value;
    else if (key === 'has_photo') search.hasPhoto = value === 'true';
    else throw new Error(`unknown filter ${key}`);
  }
  return search;
});
const PAGE_SIZE = 20;

const url = new URL(values.server);
url.pathname = `/${values.database}`;
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query('SET jit = off');

let statements = 0;
let differences = 0;
const digest = (text) => createHash('sha1').update(text).digest('hex').slice(0, 16);
const run = async (label, statement, prepared) =>
  (
    await client.query(
      prepared
        ? {
            name: `${label}_${digest(statement.text)}`,
            text: statement.text,
            values: statement.params,
          }
        : { text: statement.text, values: statement.params },
    )
  ).rows;
for (const filters of filterSets) {
  for (const word of words) {
    for (const page of pages) {
      const search = { ...filters, q: word };
      const offset = (page - 1) * PAGE_SIZE;
      for (const kind of ['countAndPage', 'pageIds']) {
        const answers = [];
        for (const [label, lib] of [
          ['before', before],
          ['after', after],
        ]) {
          // The memo's page ids as the repository reads them: through a window (textPageWindow) when the build has
          // one, then the page's slice of it.
          const window =
            kind === 'pageIds' && lib.textPageWindow
              ? lib.textPageWindow(search, PAGE_SIZE, offset)
              : null;
          const statement =
            kind === 'countAndPage'
              ? lib.countAndPageQuery(search, null, PAGE_SIZE, offset)
              : lib.pageIdsQuery(search, window ?? PAGE_SIZE, window === null ? offset : 0);
          const prepared = lib.countAndPagePrepared(search);
          const rows = await run(label, statement, prepared);
          answers.push(
            JSON.stringify(window === null ? rows : rows.slice(offset, offset + PAGE_SIZE)),
          );
          statements += 1;
        }
        if (answers[0] !== answers[1]) {
          differences += 1;
          console.log(
            `DIFFERENT ${kind} ${JSON.stringify(search)} page ${page}:\n  before ${answers[0].slice(0, 300)}\n  after  ${answers[1].slice(0, 300)}`,
          );
        }
      }
    }
  }
}
await client.end();
console.log(
  `${statements} statements (${words.length} words × ${pages.length} pages × ${filterSets.length} filter sets × 2 kinds × 2 builds): ${differences} differences`,
);
process.exit(differences ? 1 : 0);
