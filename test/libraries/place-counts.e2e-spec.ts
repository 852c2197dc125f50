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
import { queryRows } from '../support/database.js';
import {
  addCommunityPhotos,
  applyCountedWrites,
  expectRecounted,
  HAS_PHOTO,
} from '../support/recount.js';
import { useTestSuite } from '../support/suite.js';

describe('place counts', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(db.url, text, params);

  /** The 1- and 2-grams of an approved library's lower-cased city or postal code, each once per library. */
  const grams = (column: string) => `
    SELECT DISTINCT l.id, l.country, l.photo_key, '${column}:' || substr(v, i, n) AS gram
    FROM (SELECT *, ${column === 'city' ? 'lower(city)' : 'postal_code'} AS v FROM libraries
          WHERE status = 'approved') l,
         generate_series(1, 2) AS n, generate_series(1, char_length(v) - n + 1) AS i`;

  /** Every place aggregate against a recount. */
  const expectExact = () =>
    expectRecounted(
      db.url,
      { table: 'library_city_counts', key: `city || '|' || country` },
      { table: 'library_postal_code_counts', key: `postal_code || '|' || country` },
      {
        table: 'library_place_grams',
        key: `gram || '|' || country`,
        from: `(${grams('city')} UNION ALL ${grams('postal_code')}) g`,
      },
    );

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
    await applyCountedWrites(db.url, {
      prefix: 'place',
      approve: [6, 12],
      moves: [
        `UPDATE libraries SET city = 'Bergen' WHERE slug IN ('place-21', 'place-22')`,
        `UPDATE libraries SET postal_code = '10117' WHERE slug IN ('place-23', 'place-24')`,
        `UPDATE libraries SET country = 'IT' WHERE slug = 'place-25'`,
        `UPDATE libraries SET location = ST_SetSRID(ST_MakePoint(11, 51), 4326)::geography
         WHERE slug = 'place-26'`,
      ],
      photo: { remove: 28, add: 29 },
      check: expectExact,
    });
  });

  /** The filters of the list and the recount's conditions on `l` for them. */
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
      `l.postal_code LIKE '%10%' AND ${HAS_PHOTO}`,
    ],
    // With `country`: a text of three characters or more reads the trigram index, a shorter one the country's values.
    [
      'postal_code=011&country=ch',
      { postalCode: '011', country: 'ch' },
      `l.postal_code LIKE '%011%' AND l.country = 'CH'`,
    ],
    [
      'postal_code=10&has_photo=true&country=DE',
      { postalCode: '10', hasPhoto: true, country: 'DE' },
      `l.postal_code LIKE '%10%' AND ${HAS_PHOTO} AND l.country = 'DE'`,
    ],
    [
      'city=er&has_photo=false&country=DE',
      { city: 'er', hasPhoto: false, country: 'DE' },
      `lower(l.city) LIKE '%er%' AND NOT ${HAS_PHOTO} AND l.country = 'DE'`,
    ],
    [
      'city=er&postal_code=10',
      { city: 'er', postalCode: '10' },
      `lower(l.city) LIKE '%er%' AND l.postal_code LIKE '%10%'`,
    ],
    [
      'city=b&postal_code=1&has_photo=true&country=DE',
      { city: 'b', postalCode: '1', hasPhoto: true, country: 'DE' },
      `lower(l.city) LIKE '%b%' AND l.postal_code LIKE '%1%' AND ${HAS_PHOTO} AND l.country = 'DE'`,
    ],
  ];

  it('answers the recounted total and the newest-first page for city and postal_code filters', async () => {
    // A library without a primary photo but with an approved community photo has a photo; a pending one does not.
    const [{ id: community }] = await sql<{ id: number }>(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND postal_code = '1010'
       ORDER BY id LIMIT 1`,
    );
    const [{ id: pending }] = await sql<{ id: number }>(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND city = 'Berlin'
       ORDER BY id DESC LIMIT 1`,
    );
    await addCommunityPhotos(db.url, { approved: community, pending });
    for (const [query, search, where] of cases) {
      const expected = await sql<{ id: number }>(
        `SELECT l.id FROM libraries l WHERE l.status = 'approved' AND ${where}
         ORDER BY l.created_at DESC, l.id DESC`,
      );
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
          const rows = await sql<{ total: number; id: number | null }>(
            statement.text,
            statement.params,
          );
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
