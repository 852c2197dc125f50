/**
 * A list filtered by both `city` and `postal_code` (issue 22, brief 22l): library_place_pairs (migration
 * 1767700000000) stays equal to a recount of the approved libraries per city, postal code and country through every
 * kind of write, and the list's count and page (bothPlacesCountAndPageQuery), found from either place's values and
 * paged from the pairs or by a walk, answer the recounted total and the newest-first page of a plain query; prepared,
 * the statement keeps its generic plan and the rows of an unprepared run.
 */
import type pg from 'pg';
import {
  bothPlacesCountAndPageQuery,
  countAndPagePrepared,
  countAndPageQuery,
  type BothPlacesWay,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import { queryRows, withClient } from '../support/database.js';
import { expectPreparedAsFresh, genericPlans } from '../support/plans.js';
import {
  addCommunityPhotos,
  applyCountedWrites,
  expectRecounted,
  HAS_PHOTO,
} from '../support/recount.js';
import { useTestSuite } from '../support/suite.js';

const CITIES = ['Berlin', 'Bern', 'Überlingen', 'Oberhausen', 'Köln', 'bergen'];
const CODES = ['10115', '3011', '1010', '', 'SW1A 1AA', '10117', '80331'];

describe('place pairs', () => {
  const { db } = useTestSuite({ app: false });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(db.url, text, params);

  const expectExact = () =>
    expectRecounted(db.url, {
      table: 'library_place_pairs',
      key: `city || '|' || postal_code || '|' || country`,
    });

  beforeAll(async () => {
    await sql(
      `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                              photo_key, thumbnail_key, created_at)
       SELECT 'pair-' || i, 'Shelf ' || i, '', '', ($1::text[])[1 + i % 6], (ARRAY['DE', 'CH', 'DE', 'AT'])[1 + i % 4],
              ($2::text[])[1 + i % 7], ST_SetSRID(ST_MakePoint(10 + i * 0.001, 50), 4326)::geography,
              CASE WHEN i % 6 = 0 THEN 'pending' ELSE 'approved' END,
              CASE WHEN i % 3 = 0 THEN 'libraries/x/' || i || '.jpg' END,
              CASE WHEN i % 3 = 0 THEN 'libraries/x/' || i || '_thumb.jpg' END,
              timestamptz '2026-01-01T00:00:00Z' + (i % 50) * interval '1 hour'
       FROM generate_series(1, 600) AS i`,
      [CITIES, CODES],
    );
  });

  it('follows inserts, approvals, rejections, edits of places, moves, photos and deletions', async () => {
    await applyCountedWrites(db.url, {
      prefix: 'pair',
      approve: [6, 12],
      moves: [
        `UPDATE libraries SET city = 'Bergen' WHERE slug IN ('pair-21', 'pair-22')`,
        `UPDATE libraries SET postal_code = '10119' WHERE slug IN ('pair-23', 'pair-24')`,
        `UPDATE libraries SET country = 'IT' WHERE slug = 'pair-25'`,
        `UPDATE libraries SET city = 'Bern', postal_code = '3012', country = 'CH' WHERE slug = 'pair-27'`,
      ],
      photo: { remove: 30, add: 29 },
      check: expectExact,
    });
  });

  /** Filters of both places and the plain query's conditions on `l` for them. */
  const cases: [LibrarySearch, string][] = [
    [{ city: 'ber', postalCode: '10' }, `lower(l.city) LIKE '%ber%' AND l.postal_code LIKE '%10%'`],
    [{ city: 'e', postalCode: '1' }, `lower(l.city) LIKE '%e%' AND l.postal_code LIKE '%1%'`],
    [
      { city: 'ÜBER', postalCode: '101', country: 'de' },
      `lower(l.city) LIKE '%über%' AND l.postal_code LIKE '%101%' AND l.country = 'DE'`,
    ],
    [
      { city: 'ern', postalCode: '30', hasPhoto: true },
      `lower(l.city) LIKE '%ern%' AND l.postal_code LIKE '%30%' AND ${HAS_PHOTO}`,
    ],
    [
      { city: 'er', postalCode: '1', hasPhoto: false, country: 'DE' },
      `lower(l.city) LIKE '%er%' AND l.postal_code LIKE '%1%' AND NOT ${HAS_PHOTO} AND l.country = 'DE'`,
    ],
    [
      { city: 'b', postalCode: '1', hasPhoto: true, country: 'AT' },
      `lower(l.city) LIKE '%b%' AND l.postal_code LIKE '%1%' AND ${HAS_PHOTO} AND l.country = 'AT'`,
    ],
    [
      { city: 'köln', postalCode: 'SW1A' },
      `lower(l.city) LIKE '%köln%' AND l.postal_code LIKE '%SW1A%'`,
    ],
    [{ city: '_', postalCode: '1' }, 'false'],
    [{ city: 'nothing', postalCode: '10' }, 'false'],
  ];

  const ways: BothPlacesWay[] = [
    { driver: 'auto', walkEntries: 5000 },
    { driver: 'city', walkEntries: 0 },
    { driver: 'postal_code', walkEntries: 0 },
    { driver: 'city', walkEntries: 1e9 },
    { driver: 'postal_code', walkEntries: 1e9 },
  ];

  it('answers the recounted total and the newest-first page whichever place finds the pairs and however it pages', async () => {
    const [{ id: community }] = await sql<{ id: number }>(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND city = 'Bern'
       AND postal_code = '3011' ORDER BY id LIMIT 1`,
    );
    const [{ id: pending }] = await sql<{ id: number }>(
      `SELECT id FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND city = 'Köln'
       ORDER BY id DESC LIMIT 1`,
    );
    await addCommunityPhotos(db.url, { approved: community, pending });
    for (const [search, where] of cases) {
      const expected = (
        await sql<{ id: number }>(
          `SELECT l.id FROM libraries l WHERE l.status = 'approved' AND ${where}
           ORDER BY l.created_at DESC, l.id DESC`,
        )
      ).map((row) => row.id);
      if (where !== 'false') expect(expected.length).toBeGreaterThan(0);
      for (const way of ways)
        for (const offset of [0, 7, 40]) {
          const statement = bothPlacesCountAndPageQuery(search, null, 5, offset, way);
          const rows = await sql<{ total: number; id: number | null }>(
            statement.text,
            statement.params,
          );
          const label = { search, way, offset };
          expect({ ...label, total: rows[0].total }).toEqual({ ...label, total: expected.length });
          expect({
            ...label,
            ids: rows.flatMap((row) => (row.id === null ? [] : [row.id])),
          }).toEqual({ ...label, ids: expected.slice(offset, offset + 5) });
        }
    }
  });

  it('is prepared, keeps its generic plan, and gives the rows of an unprepared run', async () => {
    const texts: [string, string][] = [
      ['ber', '10'],
      ['e', '1'],
      ['über', '101'],
      ['köln', 'SW1A'],
      ['nothing', '10'],
      ['ern', '30'],
    ];
    await withClient(db.url, async (client: pg.Client) => {
      for (const [label, base] of [
        ['plain', {}],
        ['country and has_photo', { country: 'DE', hasPhoto: true }],
      ] as const) {
        const name = `pairs_${label.replace(/ /g, '_')}`;
        for (let i = 0; i < 12; i += 1) {
          const [city, postalCode] = texts[i % texts.length];
          const search: LibrarySearch = { ...base, city, postalCode };
          expect(countAndPagePrepared(search)).toBe(true);
          const statement = countAndPageQuery(search, null, 5, (i % 3) * 5);
          await expectPreparedAsFresh(client, name, statement, { label, i });
        }
        expect({ label, generic: (await genericPlans(client, name)) > 0 }).toEqual({
          label,
          generic: true,
        });
      }
    });
  });
});
