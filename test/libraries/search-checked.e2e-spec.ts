/**
 * `search` alone of three spaces or more, and without three letters or digits in a row (issue 22, brief 22t): no
 * table counts them exactly, so their candidates come from the bitmaps (the AND of the rows of every window of three
 * parts in library_search_triples, or of every gram in library_search_grams) and each candidate is checked against
 * its `search_text` through the primary key. Before, they were counted library by library (seconds at 1M). Checked
 * against plain SQL on the folded text, on every page, after writes, with candidates that do not match (windows of
 * the phrase apart in one text).
 */
import request from 'supertest';
import {
  countAndPagePrepared,
  countAndPageQuery,
  countQuery,
  substringCountAndPageQuery,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { expectPreparedAsFresh, genericPlans, nodesOf, type PlanNode } from '../support/plans.js';
import { expectSearchPages, plainSearch, sqlOn } from '../support/search-reference.js';
import { useTestSuite } from '../support/suite.js';

const LONG = 'kobold'.repeat(20);
/** Candidates checked one by one whatever their number; or never (the one scan of the libraries, as before). */
const CHECK_ALL = { bitmaps: 8, walk: 8, checked: 0 };
const CHECK_NONE = { bitmaps: 8, walk: 8, checked: 1e12 };

/** Three spaces or more (triples' windows), and no three letters or digits in a row (grams). */
const TRIPLED = [
  'eins zwei drei vier',
  'EINS zwei drei vier fünf',
  'zwei drei vier fünf',
  'a eins zwei drei',
  'quelle am platz kobold',
  'quelle  am platz',
  'am platz kobold und',
  'platz kobold und zwerg. köln',
  'platz kobold und zwerg. koln',
  'rue de l’église 2 50667',
  '100% bücher kobold und',
  'ein buch x y z',
  'x y z kobold',
  `${LONG} und zwerg. köln`,
  `${LONG.slice(-30)} und zwerg. köln hauptstraße`,
];
const GRAMMED = ['e am p', 'a b c', 'st.', '1 10', 'b_c', 'x y z', '5 5', 'c:\\t', '% b', 'i  z'];

describe('search of three spaces or more, and without three letters or digits in a row', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
  const list = (query: string) => request(t.http).get(`/api/v1/libraries/?${query}`);
  const sql = sqlOn(db);

  /** Pages 1, 2, one in the middle and the last, at each page size: total and slugs as plain SQL has them. */
  async function expectSearches(): Promise<void> {
    for (const text of [...TRIPLED, ...GRAMMED]) {
      // The count statement (what keys the count memo) too.
      const count = countQuery({ search: text });
      expect([text, (await sql(count.text, count.params))[0].n]).toEqual([
        text,
        (await plainSearch(sql, text)).length,
      ]);
      await expectSearchPages(sql, list, [text], [50, 3]);
    }
  }

  beforeAll(async () => {
    // Ids across a chunk boundary (8,192 ids). `eins zwei drei vier` whole in some texts, its two windows apart in
    // others (candidates that do not match); accents, LIKE metacharacters, double spaces, a token of 120 characters.
    await sql(
      `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location,
                              status, created_at)
       SELECT 8150 + i, 'checked-' || i,
              (ARRAY['Eins zwei drei vier ' || i, 'Straßenregal', 'Café 100% Bücher', 'Lese_Ecke b_c',
                     'Quelle  am Platz', 'Kobold', 'x y z'])[1 + i % 7],
              (ARRAY['Kobold und Zwerg.', 'eins zwei drei x zwei drei vier', 'Nimm ein Buch x y z.',
                     'C:\\temp 5 5', '', $1 || ' und Zwerg.', 'Quelle am Platz Kobold und Zwerg.',
                     'a eins zwei drei vier fünf', 'St. e am P 1 10 % b'])[1 + i % 9],
              (ARRAY['Hauptstraße 5', 'Rue de l’Église 2', '', 'a b c'])[1 + i % 4],
              (ARRAY['Köln', 'Koeln', 'Bern'])[1 + i % 4 % 3], 'DE',
              (ARRAY['50667', '1011', 'AB_12', ''])[1 + i % 4],
              ST_SetSRID(ST_MakePoint(7, 51), 4326)::geography,
              CASE WHEN i % 6 = 0 THEN 'pending' WHEN i % 11 = 0 THEN 'rejected' ELSE 'approved' END,
              timestamptz '2024-01-01' + (i * 7919 % 400) * interval '1 hour'
       FROM generate_series(1, 160) AS i`,
      [LONG],
    );
    await sql('VACUUM ANALYZE libraries, library_search_triples, library_search_grams');
  });

  /** The relations the count statement of `search=text` reads. */
  const relations = async (text: string) => {
    const statement = countQuery({ search: text });
    const [row] = await sql(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params);
    const plan = (row as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0].Plan;
    return [...new Set(nodesOf(plan).flatMap((node) => node['Relation Name'] ?? []))].sort();
  };

  it('finds the candidates in library_search_triples or library_search_grams, and is prepared', async () => {
    for (const text of TRIPLED) {
      expect([text, await relations(text)]).toEqual([
        text,
        ['libraries', 'library_country_counts', 'library_search_triples'],
      ]);
      expect([text, countAndPagePrepared({ search: text })]).toEqual([text, true]);
    }
    for (const text of GRAMMED) {
      expect([text, await relations(text)]).toEqual([
        text,
        ['libraries', 'library_country_counts', 'library_search_grams'],
      ]);
      expect([text, countAndPagePrepared({ search: text })]).toEqual([text, true]);
    }
  });

  it('reads libraries only by id, a probe per candidate', async () => {
    const ID_INDEXES = ['Index Scan libraries_pkey', 'Index Scan libraries_approved_id_idx'];
    for (const text of ['eins zwei drei vier', 'am platz kobold und', 'e am p', 'x y z']) {
      // Candidates checked whatever their share of the libraries.
      const statement = substringCountAndPageQuery({ search: text }, null, 20, 0, CHECK_ALL)!;
      const [row] = await sql(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.params);
      const plan = (row as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0].Plan;
      const reads = nodesOf(plan)
        .filter((node) => node['Relation Name'] === 'libraries' && (node['Actual Loops'] ?? 0) > 0)
        .map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`);
      expect([text, [...new Set(reads)].filter((read) => !ID_INDEXES.includes(read))]).toEqual([
        text,
        [],
      ]);
    }
  });

  it('answers the exact total and order of plain SQL after inserts, approvals, rejections, edits and deletions', async () => {
    // Some candidates are not matches (the phrase's windows apart in one text).
    const apart = await plainSearch(sql, 'eins zwei drei vier');
    const candidates = await sql(
      `SELECT count(*)::int AS n FROM libraries
       WHERE status = 'approved' AND search_text LIKE '%eins zwei drei%' AND search_text LIKE '%zwei drei vier%'`,
    );
    expect(candidates[0].n).toBeGreaterThan(apart.length);
    await expectSearches();
    await sql(
      `UPDATE libraries SET status = 'approved' WHERE slug IN ('checked-6', 'checked-12', 'checked-66')`,
    );
    await sql(
      `UPDATE libraries SET status = 'rejected' WHERE slug IN ('checked-1', 'checked-8', 'checked-20')`,
    );
    await sql(
      `UPDATE libraries SET name = 'Eins zwei drei vier', description = 'x y z, St. e am p'
       WHERE slug IN ('checked-2', 'checked-3')`,
    );
    await sql(`UPDATE libraries SET description = 'zwei drei vier' WHERE slug = 'checked-9'`);
    await sql(
      `DELETE FROM libraries WHERE slug IN ('checked-14', 'checked-15', 'checked-100', 'checked-150')`,
    );
    await expectSearches();
  }, 300_000);

  /**
   * For each text, its plain-SQL answer (slugs) and the pages of 3 to read: 1, 2, the middle, the last and the one past
   * it.
   */
  async function forEachPage(
    check: (text: string, want: unknown[], page: number) => Promise<void>,
  ): Promise<void> {
    for (const text of [...TRIPLED, ...GRAMMED]) {
      const want = await plainSearch(sql, text);
      const last = Math.max(1, Math.ceil(want.length / 3));
      for (const page of new Set([1, 2, Math.ceil(last / 2), last, last + 1]))
        await check(text, want, page);
    }
  }

  it('gives the total and order of plain SQL on every page with candidates checked, and with the one scan', async () => {
    for (const ratios of [CHECK_ALL, CHECK_NONE]) {
      await forEachPage(async (text, want, page) => {
        const statement = substringCountAndPageQuery(
          { search: text },
          null,
          3,
          (page - 1) * 3,
          ratios,
        )!;
        const rows = await sql(statement.text, statement.params);
        const slugs = await sql(
          'SELECT slug FROM libraries WHERE id = ANY($1::int[]) ORDER BY array_position($1::int[], id)',
          [rows.flatMap((row) => row.id ?? [])],
        );
        expect([text, ratios.checked, page, rows[0].total, slugs.map((row) => row.slug)]).toEqual([
          text,
          ratios.checked,
          page,
          want.length,
          want.slice((page - 1) * 3, page * 3),
        ]);
      });
    }
  });

  it('gives the page of plain SQL without its total (the memo page), its parts walked, collected, or one scan', async () => {
    const ways = [
      { bitmaps: 8, walk: 1e12, checked: 0 },
      { bitmaps: 8, walk: 0, checked: 0 },
      CHECK_NONE,
    ];
    for (const ratios of ways) {
      await forEachPage(async (text, want, page) => {
        const statement = substringCountAndPageQuery(
          { search: text },
          null,
          3,
          (page - 1) * 3,
          ratios,
          false,
        )!;
        const rows = await sql(statement.text, statement.params);
        const slugs = rows.map((row) => row.slug);
        expect([text, ratios, page, slugs]).toEqual([
          text,
          ratios,
          page,
          want.slice((page - 1) * 3, page * 3),
        ]);
      });
    }
  });

  it('keeps its generic plan, with the rows of an unprepared run', async () => {
    const texts = ['eins zwei drei vier', 'e am p', 'am platz kobold und', 'x y z', 'st.'];
    await withClient(db.url, async (client) => {
      for (let i = 0; i < 14; i += 1) {
        const text = texts[i % texts.length];
        const statement = countAndPageQuery({ search: text }, null, 3, (i % 3) * 3);
        // One name per table (one statement text each).
        const name = `checked_${GRAMMED.includes(text) ? 'grams' : 'triples'}`;
        await expectPreparedAsFresh(client, name, statement, i);
      }
      for (const name of ['checked_grams', 'checked_triples']) {
        expect([name, (await genericPlans(client, name)) > 0]).toEqual([name, true]);
      }
    });
  });
});
