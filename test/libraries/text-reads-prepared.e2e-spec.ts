/**
 * The list's reads of a `q` list are prepared statements (issue 22, brief 22q): the count and page, the ids of a page
 * after a memoised count, and the rows of a memoised page by id, for `q` alone and with `country` and `has_photo`.
 * With a place filter (`city`, `postal_code`) the text statements stay unprepared (their best plan depends on the
 * place's text). The statements are recorded by PreparedReader's capture, as the bench records them.
 */
import request from 'supertest';
import { PreparedReader, type CapturedStatement } from '../../src/database/prepared-reader.js';
import { LARGE_RESULT_ROWS } from '../../src/libraries/approved-list.repository.js';
import { withClient } from '../support/database.js';
import type { TestApp } from '../support/app.js';
import { useTestSuite } from '../support/suite.js';

describe('q lists read with prepared statements', () => {
  let t: TestApp;
  const suite = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ t } = s));

  beforeAll(async () => {
    // More matches of `regal` than the memo's threshold, so its count and pages are memoised.
    await withClient(suite.db.url, (client) =>
      client.query(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                                created_at)
         SELECT 'read-' || i, 'Regal ' || i, 'Bücher', '', 'Wien', 'DE', '1010',
                ST_SetSRID(ST_MakePoint(16, 48), 4326)::geography, 'approved',
                timestamptz '2024-01-01' + i * interval '1 minute'
         FROM generate_series(1, $1::int) AS i`,
        [LARGE_RESULT_ROWS + 200],
      ),
    );
  });

  /** What the list read for `query` (a page, counted or from the memo): whether each statement was prepared. */
  async function reads(query: string): Promise<{ sql: string; prepared: boolean }[]> {
    const reader = t.app.get(PreparedReader);
    reader.startCapture(100);
    try {
      await request(t.http).get(`/api/v1/libraries/?${query}`).expect(200);
      return reader.takeCapture().map((statement: CapturedStatement) => ({
        sql: statement.text.replace(/\s+/g, ' ').slice(0, 40),
        prepared: statement.prepared,
      }));
    } finally {
      reader.takeCapture();
    }
  }

  it.each(['q=regal', 'q=regal&country=de', 'q=regal&has_photo=false'])(
    '%s: count and page, then a memoised count’s page, then a memoised page',
    async (query) => {
      // Count and page in one statement; the count is memoised (more than LARGE_RESULT_ROWS).
      const first = await reads(query);
      expect(first).toHaveLength(1);
      // Page 2: the count from the memo, the page's ids and its rows by id.
      const second = await reads(`${query}&page=2`);
      expect(second).toHaveLength(2);
      // Page 2 again: its ids from the memo too, the rows by id only.
      const third = await reads(`${query}&page=2`);
      expect(third).toHaveLength(1);
      expect([...first, ...second, ...third].filter((read) => !read.prepared)).toEqual([]);
    },
  );

  it('keeps q with a place filter unprepared', async () => {
    const placed = await reads('q=regal&city=wien');
    expect(placed.map((read) => read.prepared)).toEqual([false]);
  });
});
