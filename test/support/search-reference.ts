/**
 * The references the `search` suites (search, search-short, search-scan-or-bitmaps) check the list against: what
 * a search answers in plain SQL over `libraries`, and recounts of the per-chunk bitmap tables its triggers keep
 * (library_search_tokens, library_search_grams, library_search_triples).
 */
import type pg from 'pg';
import type { Response } from 'supertest';
import { countQuery } from '../../src/libraries/list-query.js';
import { withClient } from './database.js';

/** The rows of one statement, on a connection of its own (as pg gives them: a test asserts their shape). */
export type Sql = (text: string, params?: unknown[]) => Promise<pg.QueryResultRow[]>;

/** `Sql` on the suite's database `db`, whose url is read when a statement runs (once the suite is up). */
export function sqlOn(db: { url: string }): Sql {
  return (text, params = []) =>
    withClient(db.url, async (client) => (await client.query(text, params)).rows);
}

/**
 * The approved libraries whose folded text holds `text`: name matches first, then newest first (their `column`).
 */
export async function plainSearch(
  sql: Sql,
  text: string,
  column: 'slug' | 'id' = 'slug',
): Promise<unknown[]> {
  const rows = await sql(
    `SELECT l.${column} AS key FROM libraries l
     WHERE l.status = 'approved' AND strpos(l.search_text, lower(bookcase_unaccent($1))) > 0
     ORDER BY strpos(lower(bookcase_unaccent(l.name)), lower(bookcase_unaccent($1))) > 0 DESC,
              l.created_at DESC, l.id DESC`,
    [text],
  );
  return rows.map((row) => row.key as unknown);
}

/**
 * For each of `searches`, pages 1, 2, one in the middle and the last of `search=text` at each of `sizes` through
 * `list` (GET /libraries/?query): total and slugs as plain SQL has them.
 */
export async function expectSearchPages(
  sql: Sql,
  list: (query: string) => PromiseLike<Response>,
  searches: readonly string[],
  sizes: readonly number[] = [50, 7, 2],
): Promise<void> {
  for (const text of searches) {
    const want = await plainSearch(sql, text);
    for (const size of sizes) {
      const last = Math.max(1, Math.ceil(want.length / size));
      for (const page of new Set([1, 2, Math.ceil(last / 2), last])) {
        const res = await list(`search=${encodeURIComponent(text)}&page_size=${size}&page=${page}`);
        const slugs = (res.body.items as { slug: string }[] | undefined)?.map((item) => item.slug);
        expect([text, size, page, res.status, res.body.pagination?.total, slugs]).toEqual([
          text,
          size,
          page,
          200,
          want.length,
          // A page past the end is the last page.
          want.slice((Math.min(page, last) - 1) * size, Math.min(page, last) * size),
        ]);
      }
    }
  }
}

/**
 * `table` holds exactly the bits of a recount by its key function `keys` (`keys(search_text, folded name)` gives a
 * library's keys and whether each is in the name), and no empty row.
 */
export async function expectSearchTableRecounted(
  sql: Sql,
  table: string,
  keys: string,
): Promise<void> {
  const missing = await sql(
    `SELECT p.token, l.id FROM libraries l
     CROSS JOIN ${keys}(l.search_text, lower(bookcase_unaccent(l.name))) p
     LEFT JOIN ${table} s ON s.token = p.token AND s.chunk = l.id >> 13
     WHERE l.status = 'approved'
       AND (s.token IS NULL OR get_bit(s.approved, l.id & 8191) = 0
            OR get_bit(s.in_name, l.id & 8191) <> p.in_name::int)`,
  );
  expect([table, missing]).toEqual([table, []]);
  const kept = await sql(
    `SELECT token || '|' || sum(bit_count(approved)) || '|' || sum(bit_count(in_name)) AS line
     FROM ${table} GROUP BY token ORDER BY token`,
  );
  const recount = await sql(
    `SELECT p.token || '|' || count(*) || '|' || count(*) FILTER (WHERE p.in_name) AS line
     FROM libraries l, ${keys}(l.search_text, lower(bookcase_unaccent(l.name))) p
     WHERE l.status = 'approved' GROUP BY p.token ORDER BY p.token`,
  );
  expect([table, kept]).toEqual([table, recount]);
  expect(
    await sql(`SELECT count(*)::int AS n FROM ${table} WHERE bit_count(approved) = 0`),
  ).toEqual([{ n: 0 }]);
}

/** The relations the count statement of `search=text` reads. */
export async function countRelations(sql: Sql, text: string): Promise<string[]> {
  const statement = countQuery({ search: text });
  const [row] = await sql(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params);
  const names: string[] = [];
  const walk = (node: { 'Relation Name'?: string; Plans?: unknown[] }) => {
    if (node['Relation Name']) names.push(node['Relation Name']);
    (node.Plans ?? []).forEach((child) => walk(child as typeof node));
  };
  walk((row as { 'QUERY PLAN': { Plan: { Plans?: unknown[] } }[] })['QUERY PLAN'][0].Plan);
  return [...new Set(names)].sort();
}
