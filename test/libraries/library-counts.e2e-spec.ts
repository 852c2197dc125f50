/**
 * library_counts and library_country_counts (issue 22) stay equal to a recount of the approved libraries through every kind of write the app
 * and the CLI make (bulk insert, approval, rejection, a change of country, date or photo, deletion), and the list,
 * countries and statistics that read it answer the exact counts, has_photo included (community photos count).
 */
import request from 'supertest';
import { withClient } from '../support/database.js';
import { useTestSuite } from '../support/suite.js';

describe('library_counts', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  const sql = (text: string, params: unknown[] = []) =>
    withClient(db.url, async (client) => (await client.query(text, params)).rows);

  /** The aggregate against a recount; both as `country|day|approved|with_photo` lines with non-zero counts. */
  async function expectExact(): Promise<void> {
    const kept = await sql(
      `SELECT country || '|' || day || '|' || approved || '|' || with_photo AS line FROM library_counts
       WHERE approved > 0 ORDER BY 1`,
    );
    const recount = await sql(
      `SELECT country || '|' || (created_at AT TIME ZONE 'UTC')::date || '|' || count(*) || '|'
              || count(*) FILTER (WHERE photo_key IS NOT NULL) AS line
       FROM libraries WHERE status = 'approved' GROUP BY country, (created_at AT TIME ZONE 'UTC')::date ORDER BY 1`,
    );
    expect(kept).toEqual(recount);
    const perCountry = await sql(
      `SELECT country || '|' || approved || '|' || with_photo AS line FROM library_country_counts
       WHERE approved > 0 OR with_photo > 0 ORDER BY 1`,
    );
    const countryRecount = await sql(
      `SELECT country || '|' || count(*) || '|' || count(*) FILTER (WHERE photo_key IS NOT NULL) AS line
       FROM libraries WHERE status = 'approved' GROUP BY country ORDER BY 1`,
    );
    expect(perCountry).toEqual(countryRecount);
  }

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
    await expectExact();
    await sql(
      `UPDATE libraries SET status = 'approved' WHERE slug IN ('count-4', 'count-8', 'count-12')`,
    );
    await expectExact();
    await sql(`UPDATE libraries SET status = 'rejected' WHERE slug LIKE 'count-1%'`);
    await expectExact();
    await sql(
      `UPDATE libraries SET country = 'IT' WHERE slug IN ('count-21', 'count-22', 'count-23')`,
    );
    await sql(
      `UPDATE libraries SET created_at = created_at - interval '40 days' WHERE slug = 'count-25'`,
    );
    await sql(
      `UPDATE libraries SET photo_key = NULL, thumbnail_key = NULL WHERE slug = 'count-26'`,
    );
    await sql(
      `UPDATE libraries SET photo_key = 'p.jpg', thumbnail_key = 't.jpg' WHERE slug = 'count-27'`,
    );
    await sql(`UPDATE libraries SET name = 'Renamed' WHERE slug LIKE 'count-3%'`);
    await expectExact();
    await sql(`DELETE FROM libraries WHERE slug LIKE 'count-5%' OR slug = 'count-2'`);
    await expectExact();
  });

  it('answers the list, countries and statistics with exact counts', async () => {
    // A library without a primary photo but with an approved community photo has a photo; a pending one does not.
    const [{ id: community }] = await sql(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND country = 'AT' ORDER BY id LIMIT 1`,
    );
    const [{ id: pendingPhoto }] = await sql(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND country = 'AT' ORDER BY id DESC LIMIT 1`,
    );
    for (const [id, status] of [
      [community, 'approved'],
      [community, 'approved'],
      [pendingPhoto, 'pending'],
    ])
      await sql(
        `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status) VALUES ($1, 'cp.jpg', 'cp_t.jpg', $2)`,
        [id, status],
      );
    const recount = async (where: string) =>
      (
        await sql(`SELECT count(*)::int AS n FROM libraries l WHERE l.status = 'approved' ${where}`)
      )[0].n as number;
    const withPhoto = `AND (l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
                        WHERE p.library_id = l.id AND p.status = 'approved'))`;
    const cases: [string, string][] = [
      ['', ''],
      ['country=at', `AND l.country = 'AT'`],
      ['has_photo=true', withPhoto],
      [
        'has_photo=false',
        `AND NOT (l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
                            WHERE p.library_id = l.id AND p.status = 'approved'))`,
      ],
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
