/**
 * `q` lists ordered by text (alone, with `country`, `has_photo` or both) are prepared and served by PostgreSQL's
 * generic plan after their first five executions (issue 22, brief 22q). Their statement chose its branches from
 * constants when PostgreSQL planned it (the words' lexemes and tsqueries, the page's reach), so every custom plan
 * looked cheaper than the generic one and each request was planned again: 1.5–2 ms of a cheap statement's 2–2.5 at
 * 1M. Each list below is prepared as the app prepares it, run with other words, pages and readers at every execution,
 * and must keep the generic plan and give the answer of a plain SQL reference (total, and the order "name matches
 * first, then newest first"), whichever way its parts are read (collected, walked testing tsvectors, walked testing
 * bits).
 */
import type pg from 'pg';
import {
  HAS_PHOTO,
  byIdsQuery,
  countAndPagePrepared,
  countAndPageQuery,
  pageIdsQuery,
  pageQuery,
  prefixTsQuerySql,
  searchWords,
  textCountAndPageQuery,
  worthPreparing,
  type LibrarySearch,
  type TextWalk,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { genericPlans } from '../support/plans.js';
import { useTestSuite } from '../support/suite.js';

const EXECUTIONS = 12;

/**
 * What the lists are run with, one per execution: one lexeme (common, rare, a prefix, accents typed both ways),
 * several, one longer than the prefixes kept (counted from `libraries`), one without matches, and a word that
 * `searchWords` keeps but that leaves no lexeme.
 */
const WORDS = [
  'buch',
  'Bücher Regal',
  'kiosk',
  'b',
  'bucher',
  'donaudampfschifffahrtsgesellschaft',
  'quokka',
  'regal schrank tausch',
  'sch',
  'kiosk buch',
  'ꙮ',
  'tausch',
];

const LISTS: [string, LibrarySearch][] = [
  ['q alone', {}],
  ['q and country', { country: 'de' }],
  ['q and has_photo', { hasPhoto: true }],
  ['q and has_photo=false', { hasPhoto: false }],
  ['q, country and has_photo', { country: 'AT', hasPhoto: true }],
];

/** Each way of reading a part, forced (as text-search-counts.e2e-spec.ts forces them), and the list's own. */
const WAYS: [string, TextWalk | undefined][] = [
  ['as the list reads them', undefined],
  ['collected', { ratio: 0, bitsFrom: 0 }],
  ['walked, tsvectors', { ratio: 1e9, bitsFrom: 1e12 }],
  ['walked, bits', { ratio: 1e9, bitsFrom: 0 }],
];

describe('prepared q statements keep their generic plan', () => {
  const { db } = useTestSuite({ app: false });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      // 2,000 libraries over 1,000 distinct hours (ties on created_at, ordered by id), words of a small vocabulary in
      // names and descriptions, four countries, a primary photo on every third, every tenth pending.
      await client.query(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                                photo_key, created_at)
         SELECT 'plan-q-' || i,
                (ARRAY['Bücherregal', 'Buchkiosk', 'Tauschregal', 'Kiosk am Markt', 'Offener Schrank'])[1 + i % 5]
                  || ' ' || i,
                (ARRAY['Bücher zum Tauschen', 'Ein Regal mit Büchern', 'Im alten Kiosk',
                       'Donaudampfschifffahrtsgesellschaft', '', 'Schrank und Regal'])[1 + i % 6],
                '', 'Wien', (ARRAY['DE', 'AT', 'FR', 'DE', 'DK'])[1 + i % 5], '',
                ST_SetSRID(ST_MakePoint(10 + i * 0.001, 50), 4326)::geography,
                CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'approved' END,
                CASE WHEN i % 3 = 0 THEN 'photos/q-' || i || '.jpg' END,
                timestamptz '2024-01-01' + ((i * 7) % 1000) * interval '1 hour'
         FROM generate_series(1, 2000) AS i`,
      );
      await client.query('VACUUM ANALYZE libraries');
    });
  });

  /** The search of execution `i`. */
  const searchOf = (filters: LibrarySearch, i: number): LibrarySearch => ({
    ...filters,
    q: WORDS[i % WORDS.length],
  });

  /** The total and the ids of a page of `search`, by plain SQL: name matches first, then newest first. */
  async function reference(
    client: pg.Client,
    search: LibrarySearch,
    limit: number,
    offset: number,
  ): Promise<{ total: number; ids: number[] }> {
    const conditions = [`l.status = 'approved'`, `l.search_vector @@ ${prefixTsQuerySql('$1')}`];
    const params: unknown[] = [searchWords(search.q ?? '')];
    if (search.country) {
      params.push(search.country.toUpperCase());
      conditions.push(`l.country = $${params.length}`);
    }
    if (search.hasPhoto !== undefined)
      conditions.push(search.hasPhoto ? HAS_PHOTO : `NOT ${HAS_PHOTO}`);
    const { rows } = await client.query<{ id: number }>(
      `SELECT l.id FROM libraries l WHERE ${conditions.join(' AND ')}
       ORDER BY (l.search_vector @@ ${prefixTsQuerySql('$1', 'A')}) DESC, l.created_at DESC, l.id DESC`,
      params,
    );
    return { total: rows.length, ids: rows.slice(offset, offset + limit).map((row) => row.id) };
  }

  const cases = LISTS.flatMap(([list, filters]) =>
    WAYS.map(([way, walk]) => [list, way, filters, walk] as const),
  );

  it.each(cases)('%s, parts %s: count and page', async (_list, _way, filters, walk) => {
    expect(worthPreparing(searchOf(filters, 0))).toBe(true);
    await withClient(db.url, async (client) => {
      for (let i = 0; i < EXECUTIONS; i += 1) {
        const search = searchOf(filters, i);
        expect(countAndPagePrepared(search)).toBe(true);
        const limit = [20, 7, 50][i % 3];
        const offset = [0, 14, 100, 40][i % 4];
        const userId = i % 2 ? null : 1 + i;
        const statement = walk
          ? textCountAndPageQuery(search, userId, limit, offset, walk)!
          : countAndPageQuery(search, userId, limit, offset);
        const name = `q_${userId === null ? 'anonymous' : 'reader'}`;
        const { rows } = await client.query<{ total: number; id: number | null }>({
          name,
          text: statement.text,
          values: statement.params,
        });
        const expected = await reference(client, search, limit, offset);
        expect({
          q: search.q,
          offset,
          total: rows[0].total,
          ids: rows.flatMap((r) => r.id ?? []),
        }).toEqual({ q: search.q, offset, ...expected });
      }
      expect(await genericPlans(client, 'q_anonymous')).toBeGreaterThan(0);
      expect(await genericPlans(client, 'q_reader')).toBeGreaterThan(0);
      expect(await perRowWords(client, 'q_anonymous', searchOf(filters, 1))).toEqual([]);
    });
  });

  /**
   * The conditions of the generic plan of `name` that compute the words' tsquery or lexemes: none may (they are
   * InitPlans, computed once per execution; a bare expression of a parameter is computed for every row it tests).
   */
  async function perRowWords(
    client: pg.Client,
    name: string,
    search: LibrarySearch,
  ): Promise<string[]> {
    const { params } = countAndPageQuery(search, null, 20, 0);
    const literals = params.map((p) => `'${String(p).replace(/'/g, "''")}'`).join(', ');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN EXECUTE ${name}(${literals})`,
    );
    return rows
      .map((row) => row['QUERY PLAN'])
      .filter((line) => /(Filter|Cond): .*(plainto_tsquery|tsvector_to_array)/.test(line));
  }

  it.each(LISTS)(
    '%s: the page alone and the ids of a memoised count’s page',
    async (_list, filters) => {
      await withClient(db.url, async (client) => {
        for (let i = 0; i < EXECUTIONS; i += 1) {
          const search = searchOf(filters, i);
          const offset = [0, 20, 60][i % 3];
          const expected = await reference(client, search, 20, offset);
          for (const [name, statement] of [
            ['page', pageQuery(search, null, 20, offset)],
            ['ids', pageIdsQuery(search, 20, offset)],
          ] as const) {
            const { rows } = await client.query<{ id: number }>({
              name,
              text: statement.text,
              values: statement.params,
            });
            expect({ q: search.q, name, ids: rows.map((r) => r.id) }).toEqual({
              q: search.q,
              name,
              ids: expected.ids,
            });
          }
        }
        expect(await genericPlans(client, 'page')).toBeGreaterThan(0);
        expect(await genericPlans(client, 'ids')).toBeGreaterThan(0);
      });
    },
  );

  it('reads the rows of a memoised page by id on a generic plan', async () => {
    await withClient(db.url, async (client) => {
      const { rows: approved } = await client.query<{ id: number }>(
        `SELECT id FROM libraries WHERE slug LIKE 'plan-q-%' ORDER BY id`,
      );
      for (let i = 0; i < EXECUTIONS; i += 1) {
        // Pending libraries among the ids (every tenth) must not show.
        const ids = approved.slice(i * 20, i * 20 + 20 + (i % 3)).map((row) => row.id);
        const statement = byIdsQuery(ids, i % 2 ? null : 1 + i);
        const name = i % 2 ? 'rows_anonymous' : 'rows_reader';
        const prepared = await client.query({
          name,
          text: statement.text,
          values: statement.params,
        });
        const fresh = await client.query(statement.text, statement.params);
        expect(prepared.rows).toEqual(fresh.rows);
        expect(prepared.rows.length).toBeGreaterThan(15);
      }
      expect(await genericPlans(client, 'rows_anonymous')).toBeGreaterThan(0);
      expect(await genericPlans(client, 'rows_reader')).toBeGreaterThan(0);
    });
  });

  it('leaves q with a place filter, or ordered by distance, unprepared', () => {
    expect(worthPreparing({ q: 'buch', city: 'Wien' })).toBe(false);
    expect(worthPreparing({ q: 'buch', postalCode: '10' })).toBe(false);
    expect(worthPreparing({ q: 'buch', near: { lat: 50, lng: 10 } })).toBe(false);
    expect(countAndPagePrepared({ q: 'buch', city: 'Wien', country: 'AT' })).toBe(false);
  });
});
