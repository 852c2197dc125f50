/**
 * `search` alone of one or two characters and with two spaces or more (issue 22, migration 1767800000000): counted
 * from library_search_grams and library_search_triples, paged by their bitmaps. Checked against plain SQL on the
 * folded text after every kind of write, on every page, at page sizes that take each way of reading a page; the
 * tables against a recount, also after the migration's chunked fill on rows already there.
 */
import pg from 'pg';
import type { QueryRunner } from 'typeorm';
import request from 'supertest';
import { SearchShortGrams1767800000000 } from '../../migrations/1767800000000-search-short-grams.js';
import {
  countRelations,
  expectSearchPages,
  expectSearchTableRecounted,
  sqlOn,
} from '../support/search-reference.js';
import { useTestSuite } from '../support/suite.js';

describe('search of one or two characters, and phrases of several spaces', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
  const list = (query: string) => request(t.http).get(`/api/v1/libraries/?${query}`);
  const sql = sqlOn(db);

  const LONG = 'kobold'.repeat(75);
  /** One and two characters (letters, digits, accents both ways, punctuation, LIKE metacharacters), phrases. */
  const SEARCHES = [
    'e',
    'E',
    'é',
    'ö',
    'o',
    'ß',
    'ss',
    'k',
    '1',
    '10',
    '0',
    '5',
    '%',
    '_',
    '\\',
    '.',
    ',',
    '’',
    'ql',
    'ko',
    'Kö',
    'ue',
    'x',
    'zz',
    '½',
    'quelle  am',
    'quelle am platz',
    'am platz kobold',
    'kobold und zwerg',
    'ld und zw',
    'und zwerg. köln',
    'und zwerg. koln',
    'rue de l’église',
    '100% bücher kobold',
    'e am p',
    'a b c',
    'nimm ein buch',
    'am platz kobold und',
    'quelle  am platz',
    'hauptstraße 5 50667',
    // In the pieces of a window of 458 characters (the 450 of LONG, the city, the address); over 100 characters.
    `${LONG.slice(-40)} köln ko`,
    `${LONG.slice(-95)} köln ko`,
  ];

  /** Pages 1, 2, one in the middle and the last, at each page size: total and slugs as plain SQL has them. */
  const expectSearches = () => expectSearchPages(sql, list, SEARCHES);

  /** Each table holds exactly the bits of a recount by its key function, and no empty row. */
  async function expectTablesExact(): Promise<void> {
    await expectSearchTableRecounted(sql, 'library_search_grams', 'bookcase_search_grams');
    await expectSearchTableRecounted(sql, 'library_search_triples', 'bookcase_search_triples');
  }

  /** The relations the count statement of `search=text` reads. */
  const relations = (text: string) => countRelations(sql, text);

  beforeAll(async () => {
    // Ids across a chunk boundary (8,192 ids), in one statement; accents, LIKE metacharacters, double spaces, a
    // token of 450 characters (its windows kept as pieces).
    await sql(
      `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location,
                              status, created_at)
       SELECT 8100 + i, 'short-' || i,
              (ARRAY['Bücherkobold ' || i, 'Straßenregal', 'Café 100% Bücher', 'Lese_Ecke', 'Back\\slash Kiste',
                     'Quelle  am Platz', 'Kobold', 'Kö'])[1 + i % 8],
              (ARRAY['Kobold und Zwerg.', 'Rabatt 50%', 'snake_case, Nimm ein Buch.', 'C:\\temp', '', $1,
                     'Quelle am Platz', 'Ä ½ ß'])[1 + i % 5 + i % 4],
              (ARRAY['Hauptstraße 5', 'Rue de l’Église 2', '', 'Ko½ld 7'])[1 + i % 4],
              (ARRAY['Köln', 'Koeln', 'Bern'])[1 + i % 4 % 3], 'DE',
              (ARRAY['50667', '1011', 'AB_12', ''])[1 + i % 4],
              ST_SetSRID(ST_MakePoint(7, 51), 4326)::geography,
              CASE WHEN i % 6 = 0 THEN 'pending' WHEN i % 11 = 0 THEN 'rejected' ELSE 'approved' END,
              timestamptz '2024-01-01' + (i * 7919 % 400) * interval '1 hour'
       FROM generate_series(1, 180) AS i`,
      [LONG],
    );
  });

  it('counts one or two characters from library_search_grams, two spaces from library_search_triples', async () => {
    for (const text of ['e', 'É', '10', '%', '_', '\\', 'ql', 'ß']) {
      expect([text, await relations(text)]).toEqual([text, ['library_search_grams']]);
    }
    for (const text of [
      'quelle am platz',
      'quelle  am',
      'ld und zw',
      '100% bücher kobold',
      `${LONG.slice(-40)} köln ko`,
    ]) {
      expect([text, await relations(text)]).toEqual([text, ['library_search_triples']]);
    }
    // `½` (folds to ` 1/2`), over 100 characters: counted from the libraries (three spaces, or no three letters or
    // digits in a row: search-checked.e2e-spec).
    for (const text of ['½', `${LONG.slice(-95)} köln ko`]) {
      expect([text, await relations(text)]).toEqual([text, ['libraries']]);
    }
  });

  it('answers the exact total and order of plain SQL after inserts, approvals, rejections, edits and deletions', async () => {
    await expectTablesExact();
    await expectSearches();
    await sql(
      `UPDATE libraries SET status = 'approved' WHERE slug IN ('short-6', 'short-12', 'short-66')`,
    );
    await sql(
      `UPDATE libraries SET status = 'rejected' WHERE slug IN ('short-1', 'short-7', 'short-20')`,
    );
    await expectTablesExact();
    await expectSearches();
    await sql(`UPDATE libraries SET name = 'Kein Treffer' WHERE slug IN ('short-14', 'short-21')`);
    await sql(`UPDATE libraries SET name = 'Quelle am Platz' WHERE slug = 'short-2'`);
    await sql(
      `UPDATE libraries SET description = 'Bücher_Kobold 100% zz', city = 'Église', address = 'Ql 1',
                            postal_code = '10110' WHERE slug IN ('short-3', 'short-4', 'short-5')`,
    );
    // A word moved between name and description: `search_text` stays as it was, not the name.
    await sql(
      `UPDATE libraries SET name = 'Kobold und', description = 'Zwerg.' WHERE slug = 'short-8'`,
    );
    await sql(
      `UPDATE libraries SET name = 'Kobold', description = 'und Zwerg.' WHERE slug = 'short-8'`,
    );
    await sql(`UPDATE libraries SET name = name, country = 'AT' WHERE slug LIKE 'short-1%'`);
    await expectTablesExact();
    await expectSearches();
    await sql(
      `DELETE FROM libraries WHERE slug IN ('short-3', 'short-9', 'short-10', 'short-100')`,
    );
    await expectTablesExact();
    await expectSearches();
  }, 300_000); // Many searches and pages: 15 s quiet, 90 s at load 20.

  it('fills both tables chunk by chunk from the libraries already there, also after writes before the fill', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      let failFill = true;
      let locks = 0;
      let locked = false;
      /** Statements that computed a chunk's keys from the libraries, with and without the lock on `libraries`. */
      const computed = { locked: 0, unlocked: 0 };
      // Just what the migration uses of a QueryRunner; the first run stops where the second chunk's rows would be
      // swapped in (the grams of chunk 0 filled, those of chunk 1 and the triples not), with the tables and triggers
      // committed, as a failure part-way would leave them.
      const runner = {
        query: async (text: string, params?: unknown[]) => {
          if (text.includes('LOCK TABLE libraries')) {
            locks += 1;
            if (failFill && locks === 2) throw new Error('stopped');
            locked = true;
          }
          if (/bookcase_search_(grams|triples)\(l\./.test(text))
            computed[locked ? 'locked' : 'unlocked'] += 1;
          return (await client.query(text, params)).rows;
        },
        startTransaction: async (level?: string) =>
          void (await client.query(level ? `BEGIN ISOLATION LEVEL ${level}` : 'BEGIN')),
        commitTransaction: async () => {
          locked = false;
          await client.query('COMMIT');
        },
        rollbackTransaction: async () => {
          locked = false;
          await client.query('ROLLBACK');
        },
      } as unknown as QueryRunner;
      const migration = new SearchShortGrams1767800000000();
      await migration.down(runner);
      await expect(migration.up(runner)).rejects.toThrow('stopped');
      const rows = (table: string) =>
        sql(
          `SELECT chunk, count(*)::int AS n FROM ${table} GROUP BY chunk ORDER BY chunk`,
        ) as Promise<{ chunk: number; n: number }[]>;
      expect((await rows('library_search_grams')).map(({ chunk }) => chunk)).toEqual([0]);
      expect(await rows('library_search_triples')).toEqual([]);
      // Writes to libraries of the filled chunk and of chunks not yet filled: in the latter their triggers toggle
      // bits of rows the fill has not written (a deletion or rejection sets the bit it means to clear).
      await sql(`UPDATE libraries SET status = 'rejected' WHERE slug IN ('short-2', 'short-95')`);
      await sql(
        `UPDATE libraries SET name = 'Zz Neu', description = 'Ql ql' WHERE slug = 'short-13'`,
      );
      await sql(`DELETE FROM libraries WHERE slug IN ('short-4', 'short-97')`);
      expect((await rows('library_search_grams')).map(({ chunk }) => chunk)).toEqual([0, 1]);
      expect(await rows('library_search_triples')).not.toEqual([]);
      failFill = false;
      await migration.up(runner);
      // Every chunk's keys computed without the lock (nothing wrote meanwhile, so none again under it).
      expect(computed.locked).toBe(0);
      expect(computed.unlocked).toBeGreaterThanOrEqual(6);
    } finally {
      await client.end();
    }
    await expectTablesExact();
    await expectSearches();
    await sql(`UPDATE libraries SET status = 'pending' WHERE slug LIKE 'short-%'`);
    await expectTablesExact();
    await sql(`DELETE FROM libraries WHERE slug LIKE 'short-%'`);
    await expectTablesExact();
    expect(await sql('SELECT count(*)::int AS n FROM library_search_grams')).toEqual([{ n: 0 }]);
  }, 300_000);
});
