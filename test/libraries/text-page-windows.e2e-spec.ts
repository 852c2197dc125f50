/**
 * A memoised `q` list's pages after the first are read as windows of ids from the top (issue 22, brief 22c:
 * textPageWindow): the ids up to the next power of two of the page's end, memoised once, so the other pages within
 * the window read only their rows by id. Every page answers exactly what a plain SQL reference answers (name matches
 * first, then newest first), whatever window served it; the first page and other lists read their own ids.
 */
import request from 'supertest';
import { PreparedReader } from '../../src/database/prepared-reader.js';
import { LARGE_RESULT_ROWS } from '../../src/libraries/approved-list.repository.js';
import { textPageWindow } from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import type { TestApp } from '../support/app.js';
import { useTestSuite } from '../support/suite.js';

describe('q pages after the first read as windows of memoised ids', () => {
  let t: TestApp;
  const suite = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ t } = s));

  beforeAll(async () => {
    // More matches of `regal` than the memo's threshold (its count and pages are memoised): every fifth has it in
    // its name (the first part), the others in the description; created_at ties across ids (ordered by id).
    await withClient(suite.db.url, (client) =>
      client.query(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                                created_at)
         SELECT 'window-' || i, CASE WHEN i % 5 = 0 THEN 'Regal ' ELSE 'Schrank ' END || i,
                CASE WHEN i % 5 = 0 THEN 'Bücher' ELSE 'Ein Regal mit Büchern' END, '', 'Wien',
                CASE WHEN i % 3 = 0 THEN 'AT' ELSE 'DE' END, '1010',
                ST_SetSRID(ST_MakePoint(16, 48), 4326)::geography,
                CASE WHEN i % 11 = 0 THEN 'pending' ELSE 'approved' END,
                timestamptz '2024-01-01' + (i % 400) * interval '1 hour'
         FROM generate_series(1, $1::int) AS i`,
        [LARGE_RESULT_ROWS * 2],
      ),
    );
  });

  /** The ids of a page by plain SQL: name matches first, then newest first. */
  const reference = (country: string | null, limit: number, offset: number) =>
    withClient(suite.db.url, async (client) =>
      (
        await client.query<{ id: number }>(
          `SELECT l.id FROM libraries l
           WHERE l.status = 'approved' AND l.search_vector @@ 'regal:*'::tsquery AND ($1::text IS NULL OR l.country = $1)
           ORDER BY (l.search_vector @@ 'regal:*A'::tsquery) DESC, l.created_at DESC, l.id DESC
           LIMIT $2 OFFSET $3`,
          [country, limit, offset],
        )
      ).rows.map((row) => row.id),
    );

  /** A page's ids, and how many statements the list read for it. */
  async function page(query: string): Promise<{ ids: number[]; reads: number }> {
    const reader = t.app.get(PreparedReader);
    reader.startCapture(100);
    try {
      const response = await request(t.http).get(`/api/v1/libraries/?${query}`).expect(200);
      const body = response.body as { items: { id: number }[] };
      return { ids: body.items.map((item) => item.id), reads: reader.takeCapture().length };
    } finally {
      reader.takeCapture();
    }
  }

  it('windows are the next power of two of the page’s end, for q pages after the first only', () => {
    expect(textPageWindow({ q: 'regal' }, 20, 0)).toBeNull();
    expect(textPageWindow({ q: 'regal' }, 20, 20)).toBe(64);
    expect(textPageWindow({ q: 'regal' }, 20, 100)).toBe(128);
    expect(textPageWindow({ q: 'regal', country: 'DE' }, 50, 200)).toBe(256);
    expect(textPageWindow({ q: 'regal' }, 24, 1000)).toBe(1024);
    expect(textPageWindow({ q: 'regal' }, 20, 1010)).toBeNull();
    expect(textPageWindow({ search: 'regal' }, 20, 20)).toBeNull();
    expect(textPageWindow({ q: 'regal', near: { lat: 48, lng: 16 } }, 20, 20)).toBeNull();
    expect(textPageWindow({ q: '!!' }, 20, 20)).toBeNull();
  });

  it.each([
    ['q=regal', null],
    ['q=regal&country=de', 'DE'],
  ])(
    '%s: pages within a window read their rows only, and answer as SQL does',
    async (query, country) => {
      // Page 1 counts (memoised) and reads itself.
      const first = await page(query);
      expect(first.ids).toEqual(await reference(country, 20, 0));
      // Page 5 (ids 80–99): the window of 128 ids, then the rows.
      const fifth = await page(`${query}&page=5`);
      expect(fifth).toEqual({ ids: await reference(country, 20, 80), reads: 2 });
      // Pages 4, 6 and 3 with 40 per page (ids 60–79, 100–119, 80–119): the same window, rows only.
      for (const [params, limit, offset] of [
        ['page=4', 20, 60],
        ['page=6', 20, 100],
        ['page=3&page_size=40', 40, 80],
      ] as const) {
        expect(await page(`${query}&${params}`)).toEqual({
          ids: await reference(country, limit, offset),
          reads: 1,
        });
      }
      // Page 7 (ids 120–139) crosses the window: its own window of 256.
      expect(await page(`${query}&page=7`)).toEqual({
        ids: await reference(country, 20, 120),
        reads: 2,
      });
      // Page 2 (ids 20–39): the window of 64.
      expect(await page(`${query}&page=2`)).toEqual({
        ids: await reference(country, 20, 20),
        reads: 2,
      });
    },
  );
});
