/**
 * Memoised `search` pages (issue 22, brief 22s, session 12). The first page read with a count the memo keeps keeps its
 * ids too, so asked again it reads only its rows by id instead of ranking the matches again (at 1M, `search=bücher`
 * page 1 asked twice within LIST_CACHE_TTL_MS ORed ~1,250 dense token rows twice); so does `q`'s. A page after the
 * first is read as a window of ids from the top (substringPageWindow, as `q`'s textPageWindow), which serves the
 * other pages within it. A small result is read whole on every request. Every page answers what plain SQL answers.
 */
import request from 'supertest';
import { PreparedReader } from '../../src/database/prepared-reader.js';
import { LARGE_RESULT_ROWS } from '../../src/libraries/approved-list.repository.js';
import { withClient } from '../support/database.js';
import type { TestApp } from '../support/app.js';
import { plainSearch, sqlOn } from '../support/search-reference.js';
import { useTestSuite } from '../support/suite.js';

describe('a memoised ranked page keeps the ids read with its count', () => {
  let t: TestApp;
  const suite = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ t } = s));
  const sql = sqlOn(suite.db);

  beforeAll(async () => {
    // More matches of `regal` than the memo's threshold: every fifth in its name, the others in the description;
    // `kobold` in 30 (a small result); created_at ties across ids (ordered by id).
    await withClient(suite.db.url, (client) =>
      client.query(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                                created_at)
         SELECT 'memo-' || i, CASE WHEN i % 5 = 0 THEN 'Regal ' ELSE 'Schrank ' END || i,
                CASE WHEN i % 5 = 0 THEN 'Bücher' ELSE 'Ein Regal mit Büchern' END
                  || CASE WHEN i % 70 = 0 THEN ' Kobold' ELSE '' END, '', 'Wien',
                CASE WHEN i % 3 = 0 THEN 'AT' ELSE 'DE' END, '1010',
                ST_SetSRID(ST_MakePoint(16, 48), 4326)::geography,
                CASE WHEN i % 11 = 0 THEN 'pending' ELSE 'approved' END,
                timestamptz '2024-01-01' + (i % 400) * interval '1 hour'
         FROM generate_series(1, $1::int) AS i`,
        [LARGE_RESULT_ROWS * 2],
      ),
    );
  });

  /** A page's total and ids, and how many statements the list read for it. */
  async function page(query: string): Promise<{ total: number; ids: number[]; reads: number }> {
    const reader = t.app.get(PreparedReader);
    reader.startCapture(100);
    try {
      const response = await request(t.http).get(`/api/v1/libraries/?${query}`).expect(200);
      const body = response.body as { items: { id: number }[]; pagination: { total: number } };
      return {
        total: body.pagination.total,
        ids: body.items.map((item) => item.id),
        reads: reader.takeCapture().length,
      };
    } finally {
      reader.takeCapture();
    }
  }

  it('search: the page read with the count is read again by id only, as SQL orders it', async () => {
    const want = (await plainSearch(sql, 'regal', 'id')) as number[];
    expect(want.length).toBeGreaterThanOrEqual(LARGE_RESULT_ROWS);
    const expected = (limit: number, offset: number) => ({
      total: want.length,
      ids: want.slice(offset, offset + limit),
    });
    // Page 1: count and page in one statement, both memoised; asked again, its rows by id (main ranked the matches
    // again: 2 statements).
    expect(await page('search=Regal')).toEqual({ ...expected(20, 0), reads: 1 });
    expect(await page('search=Regal&page=1')).toEqual({ ...expected(20, 0), reads: 1 });
    // Page 3 of the memoised count: the window of 64 ids, then the rows; pages 2 and 3 and 2 of 30 within it, rows
    // only (main: each page its own ids).
    expect(await page('search=Regal&page=3')).toEqual({ ...expected(20, 40), reads: 2 });
    for (const [query, limit, offset] of [
      ['page=2', 20, 20],
      ['page=3', 20, 40],
      ['page=2&page_size=30', 30, 30],
    ] as const)
      expect(await page(`search=Regal&${query}`)).toEqual({ ...expected(limit, offset), reads: 1 });
    // Page 7 (ids 120–139) crosses it: the window of 256, which serves page 10 (ids 180–199).
    expect(await page('search=Regal&page=7')).toEqual({ ...expected(20, 120), reads: 2 });
    expect(await page('search=Regal&page=10')).toEqual({ ...expected(20, 180), reads: 1 });
    // Another text folded alike is another list in the memo; its first page read with its count, a page past the
    // window's largest (1,024 ids) its own ids.
    expect(await page('search=regal&page=1&page_size=7')).toEqual({ ...expected(7, 0), reads: 1 });
    expect(await page('search=regal&page=1&page_size=7')).toEqual({ ...expected(7, 0), reads: 1 });
    expect(await page('search=regal&page=22&page_size=50')).toEqual({
      ...expected(50, 1050),
      reads: 2,
    });
    expect(await page('search=regal&page=22&page_size=50')).toEqual({
      ...expected(50, 1050),
      reads: 1,
    });
    // Past the end: the last page, read after the count's empty page.
    const last = Math.ceil(want.length / 50);
    expect(await page(`search=regal&page=${last + 3}&page_size=50`)).toEqual({
      ...expected(50, (last - 1) * 50),
      reads: 2,
    });
  });

  it('q: the first page read with the count is read again by id only', async () => {
    const first = await page('q=regal&page_size=9');
    expect(first.reads).toBe(1);
    expect(first.total).toBeGreaterThanOrEqual(LARGE_RESULT_ROWS);
    expect(await page('q=regal&page_size=9')).toEqual({ ...first, reads: 1 });
  });

  it('a small result is read whole on every request', async () => {
    const want = (await plainSearch(sql, 'kobold', 'id')) as number[];
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(LARGE_RESULT_ROWS);
    for (let i = 0; i < 2; i += 1)
      expect(await page('search=kobold&page_size=10')).toEqual({
        total: want.length,
        ids: want.slice(0, 10),
        reads: 1,
      });
  });
});
