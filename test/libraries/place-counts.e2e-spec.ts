/**
 * library_city_counts, library_postal_code_counts and library_place_grams (issue 22, brief 22f) stay equal to a
 * recount of the approved libraries through every kind of write (insert, approval, rejection, a change of city,
 * postal code, country, location or photo, deletion), and the list filtered by `city` or `postal_code` (with
 * `country`, `has_photo`) answers the recounted total and the same page as a plain newest-first query, by either of
 * its two page plans.
 */
import request from 'supertest';
import {
  placeCountAndPageQuery,
  placeFilter,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, withClient, type TestDatabase } from '../support/database.js';

describe('place counts', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await createTestApp({ databaseUrl: db.url, env: { RATE_LIMIT_ENABLED: 'false' } });
  });

  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  const sql = (text: string, params: unknown[] = []) =>
    withClient(db.url, async (client) => (await client.query(text, params)).rows);

  const lines = (text: string) =>
    sql(text).then((rows) => rows.map((row) => (row as { line: string }).line));

  /** Every aggregate against a recount, as `key|country|approved|with_photo` lines with non-zero counts. */
  async function expectExact(): Promise<void> {
    const photo = `count(*) FILTER (WHERE photo_key IS NOT NULL)`;
    for (const [table, column] of [
      ['library_city_counts', 'city'],
      ['library_postal_code_counts', 'postal_code'],
    ]) {
      expect(
        await lines(`SELECT ${column} || '|' || country || '|' || approved || '|' || with_photo AS line
                     FROM ${table} WHERE approved <> 0 OR with_photo <> 0 ORDER BY 1`),
      ).toEqual(
        await lines(`SELECT ${column} || '|' || country || '|' || count(*) || '|' || ${photo} AS line
                     FROM libraries WHERE status = 'approved' GROUP BY ${column}, country ORDER BY 1`),
      );
    }
    const grams = (column: string) => `
      SELECT DISTINCT l.id, l.country, l.photo_key, '${column}:' || substr(v, i, n) AS gram
      FROM (SELECT *, ${column === 'city' ? 'lower(city)' : 'postal_code'} AS v FROM libraries
            WHERE status = 'approved') l,
           generate_series(1, 2) AS n, generate_series(1, char_length(v) - n + 1) AS i`;
    expect(
      await lines(`SELECT gram || '|' || country || '|' || approved || '|' || with_photo AS line
                   FROM library_place_grams WHERE approved <> 0 OR with_photo <> 0 ORDER BY 1`),
    ).toEqual(
      await lines(`SELECT gram || '|' || country || '|' || count(*) || '|' || ${photo} AS line
                   FROM (${grams('city')} UNION ALL ${grams('postal_code')}) g GROUP BY gram, country ORDER BY 1`),
    );
  }

  it('follows inserts, approvals, rejections, edits of places, moves, photos and deletions', async () => {
    await sql(
      `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                              photo_key, thumbnail_key, created_at)
       SELECT 'place-' || i, 'Shelf ' || i, '', '',
              (ARRAY['Berlin', 'Bern', 'Überlingen', 'Oberhausen', 'Köln'])[1 + i % 5],
              (ARRAY['DE', 'CH', 'DE', 'AT'])[1 + i % 4], (ARRAY['10115', '3011', '1010', '', 'SW1A 1AA'])[1 + i % 5 ],
              ST_SetSRID(ST_MakePoint(10 + i * 0.001, 50), 4326)::geography,
              CASE WHEN i % 6 = 0 THEN 'pending' ELSE 'approved' END,
              CASE WHEN i % 2 = 0 THEN 'libraries/x/' || i || '.jpg' END,
              CASE WHEN i % 2 = 0 THEN 'libraries/x/' || i || '_thumb.jpg' END,
              timestamptz '2026-01-01T00:00:00Z' + i * interval '1 hour'
       FROM generate_series(1, 240) AS i`,
    );
    await expectExact();
    await sql(`UPDATE libraries SET status = 'approved' WHERE slug IN ('place-6', 'place-12')`);
    await sql(`UPDATE libraries SET status = 'rejected' WHERE slug LIKE 'place-1%'`);
    await expectExact();
    await sql(`UPDATE libraries SET city = 'Bergen' WHERE slug IN ('place-21', 'place-22')`);
    await sql(`UPDATE libraries SET postal_code = '10117' WHERE slug IN ('place-23', 'place-24')`);
    await sql(`UPDATE libraries SET country = 'IT' WHERE slug = 'place-25'`);
    await sql(
      `UPDATE libraries SET location = ST_SetSRID(ST_MakePoint(11, 51), 4326)::geography WHERE slug = 'place-26'`,
    );
    await sql(
      `UPDATE libraries SET photo_key = NULL, thumbnail_key = NULL WHERE slug = 'place-28'`,
    );
    await sql(
      `UPDATE libraries SET photo_key = 'p.jpg', thumbnail_key = 't.jpg' WHERE slug = 'place-29'`,
    );
    await sql(`UPDATE libraries SET name = 'Renamed' WHERE slug LIKE 'place-3%'`);
    await expectExact();
    await sql(`DELETE FROM libraries WHERE slug LIKE 'place-5%' OR slug = 'place-2'`);
    await expectExact();
  });

  /** The filters of the list and the recount's conditions on `l` for them. */
  const withPhoto = `(l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
                      WHERE p.library_id = l.id AND p.status = 'approved'))`;
  const cases: [string, LibrarySearch, string][] = [
    ['city=ber', { city: 'ber' }, `lower(l.city) LIKE '%ber%'`],
    ['city=b', { city: 'b' }, `lower(l.city) LIKE '%b%'`],
    ['city=%C3%BC', { city: 'ü' }, `lower(l.city) LIKE '%ü%'`],
    [
      'city=ERLIN&country=de',
      { city: 'ERLIN', country: 'de' },
      `lower(l.city) LIKE '%erlin%' AND l.country = 'DE'`,
    ],
    ['city=nothing', { city: 'nothing' }, 'false'],
    ['city=_', { city: '_' }, `l.city LIKE '%\\_%'`],
    ['postal_code=10', { postalCode: '10' }, `l.postal_code LIKE '%10%'`],
    ['postal_code=1', { postalCode: '1' }, `l.postal_code LIKE '%1%'`],
    ['postal_code=011', { postalCode: '011' }, `l.postal_code LIKE '%011%'`],
    ['postal_code=A%201', { postalCode: 'A 1' }, `l.postal_code LIKE '%A 1%'`],
    [
      'postal_code=10&has_photo=true',
      { postalCode: '10', hasPhoto: true },
      `l.postal_code LIKE '%10%' AND ${withPhoto}`,
    ],
    [
      'city=er&has_photo=false&country=DE',
      { city: 'er', hasPhoto: false, country: 'DE' },
      `lower(l.city) LIKE '%er%' AND NOT ${withPhoto} AND l.country = 'DE'`,
    ],
    [
      'city=er&postal_code=10',
      { city: 'er', postalCode: '10' },
      `lower(l.city) LIKE '%er%' AND l.postal_code LIKE '%10%'`,
    ],
    [
      'city=b&postal_code=1&has_photo=true&country=DE',
      { city: 'b', postalCode: '1', hasPhoto: true, country: 'DE' },
      `lower(l.city) LIKE '%b%' AND l.postal_code LIKE '%1%' AND ${withPhoto} AND l.country = 'DE'`,
    ],
  ];

  it('answers the recounted total and the newest-first page for city and postal_code filters', async () => {
    // A library without a primary photo but with an approved community photo has a photo; a pending one does not.
    const [{ id: community }] = await sql(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND postal_code = '1010'
       ORDER BY id LIMIT 1`,
    );
    const [{ id: pending }] = await sql(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND city = 'Berlin'
       ORDER BY id DESC LIMIT 1`,
    );
    for (const [id, status] of [
      [community, 'approved'],
      [community, 'approved'],
      [pending, 'pending'],
    ])
      await sql(
        `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status) VALUES ($1, 'cp.jpg', 'cp_t.jpg', $2)`,
        [id, status],
      );
    for (const [query, search, where] of cases) {
      const expected = (await sql(
        `SELECT l.id FROM libraries l WHERE l.status = 'approved' AND ${where}
         ORDER BY l.created_at DESC, l.id DESC`,
      )) as { id: number }[];
      const ids = expected.map((row) => row.id);
      for (const page of [1, 2, 4]) {
        const res = await request(t.http)
          .get(`/api/v1/libraries/?${query}&page=${page}&page_size=10`)
          .expect(200);
        const lastPage = Math.max(1, Math.ceil(ids.length / 10));
        const shown = Math.min(page, lastPage);
        expect({ query, page, total: res.body.pagination.total }).toEqual({
          query,
          page,
          total: ids.length,
        });
        expect({
          query,
          page,
          ids: (res.body.items as { id: number }[]).map((item) => item.id),
        }).toEqual({
          query,
          page,
          ids: ids.slice((shown - 1) * 10, shown * 10),
        });
      }
      // Both page plans give the same rows: the walk newest first, and the newest of each matching value.
      const filter = placeFilter(search);
      // Both places have one plan (bothPlacesCountAndPageQuery), checked through the API above.
      if (search.city && search.postalCode) {
        expect(filter).toBeNull();
        continue;
      }
      expect(filter).not.toBeNull();
      for (const walkEntries of [0, 1e9])
        for (const offset of [0, 7]) {
          const statement = placeCountAndPageQuery(search, filter!, null, 5, offset, {
            entries: walkEntries,
            upToTotal: false,
          });
          const rows = (await sql(statement.text, statement.params)) as {
            total: number;
            id: number | null;
          }[];
          expect({ query, walkEntries, offset, total: rows[0].total }).toEqual({
            query,
            walkEntries,
            offset,
            total: ids.length,
          });
          expect({
            query,
            walkEntries,
            offset,
            ids: rows.flatMap((row) => (row.id === null ? [] : [row.id])),
          }).toEqual({ query, walkEntries, offset, ids: ids.slice(offset, offset + 5) });
        }
    }
  });
});
