/**
 * library_counts and library_country_counts (issue 22) stay equal to a recount of the approved libraries through every kind of write the app
 * and the CLI make (bulk insert, approval, rejection, a change of country, date or photo, deletion), and the list,
 * countries and statistics that read it answer the exact counts, has_photo included (community photos count).
 */
import request from 'supertest';
import { queryRows } from '../support/database.js';
import {
  addCommunityPhotos,
  applyCountedWrites,
  expectRecounted,
  HAS_PHOTO,
} from '../support/recount.js';
import { useTestSuite } from '../support/suite.js';

describe('library_counts', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(db.url, text, params);

  /** Both aggregates against a recount: per country and UTC day, and per country. */
  const expectExact = () =>
    expectRecounted(
      db.url,
      {
        table: 'library_counts',
        key: `country || '|' || day`,
        recountKey: `country || '|' || (created_at AT TIME ZONE 'UTC')::date`,
      },
      { table: 'library_country_counts', key: 'country' },
    );

  it('follows inserts, approvals, rejections, moves between countries and days, photos and deletions', async () => {
    await sql(
      `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                              photo_key, thumbnail_key, created_at)
       SELECT 'count-' || i, 'Shelf ' || i, '', '', 'City', (ARRAY['DE', 'AT', 'FR'])[1 + i % 3], '',
              ST_SetSRID(ST_MakePoint(10, 50), 4326)::geography,
              CASE WHEN i % 4 = 0 THEN 'pending' ELSE 'approved' END,
              CASE WHEN i % 2 = 0 THEN 'libraries/x/' || i || '.jpg' END,
              CASE WHEN i % 2 = 0 THEN 'libraries/x/' || i || '_thumb.jpg' END,
              timestamptz '2026-01-01T23:30:00Z' + (i % 5) * interval '1 hour'
       FROM generate_series(1, 200) AS i`,
    );
    await applyCountedWrites(db.url, {
      prefix: 'count',
      approve: [4, 8, 12],
      moves: [
        `UPDATE libraries SET country = 'IT' WHERE slug IN ('count-21', 'count-22', 'count-23')`,
        `UPDATE libraries SET created_at = created_at - interval '40 days' WHERE slug = 'count-25'`,
      ],
      photo: { remove: 26, add: 27 },
      check: expectExact,
    });
  });

  it('answers the list, countries and statistics with exact counts', async () => {
    // A library without a primary photo but with an approved community photo has a photo; a pending one does not.
    const [{ id: community }] = await sql<{ id: number }>(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND country = 'AT' ORDER BY id LIMIT 1`,
    );
    const [{ id: pendingPhoto }] = await sql<{ id: number }>(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND country = 'AT' ORDER BY id DESC LIMIT 1`,
    );
    await addCommunityPhotos(db.url, { approved: community, pending: pendingPhoto });
    const recount = async (where: string) =>
      (
        await sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM libraries l WHERE l.status = 'approved' ${where}`,
        )
      )[0].n;
    const withPhoto = `AND ${HAS_PHOTO}`;
    const cases: [string, string][] = [
      ['', ''],
      ['country=at', `AND l.country = 'AT'`],
      ['has_photo=true', withPhoto],
      ['has_photo=false', `AND NOT ${HAS_PHOTO}`],
      ['has_photo=true&country=AT', `${withPhoto} AND l.country = 'AT'`],
    ];
    for (const [query, where] of cases) {
      const res = await request(t.http).get(`/api/v1/libraries/?${query}`).expect(200);
      expect({ query, total: res.body.pagination.total }).toEqual({
        query,
        total: await recount(where),
      });
    }

    const countries = await request(t.http).get('/api/v1/libraries/countries/').expect(200);
    const expected = await sql(
      `SELECT country AS country_code, count(*)::int AS count FROM libraries WHERE status = 'approved'
       GROUP BY country ORDER BY count DESC, country`,
    );
    expect(
      (countries.body.items as { country_code: string; count: number }[]).map(
        ({ country_code, count }) => ({
          country_code,
          count,
        }),
      ),
    ).toEqual(expected);

    const stats = await request(t.http).get('/api/v1/statistics/').expect(200);
    expect(stats.body.total_approved).toBe(await recount(''));
    expect(stats.body.total_with_image).toBe(await recount(withPhoto));
  });
});
