/**
 * Pages after the first of the default list, `country` and `has_photo` (no place, text or proximity filter) walk an
 * index newest first for ids and dates (issue 22, brief 22x): without `has_photo=true` (which reads `photo_key` from
 * each entry's row) the walk is index-only, so no library row is read for the rows a deep page skips, and only the
 * page's rows are read in full; with the answers of a plain reading.
 */
import request from 'supertest';
import {
  countAndPageQuery,
  pageQuery,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { explainGeneric, nodesOf, type PlanNode } from '../support/plans.js';
import { useTestSuite } from '../support/suite.js';

describe('newest-first lists without a place, text or proximity filter', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      // 3,000 libraries in DE (odd) and FR (even), four in five with a primary photo; of those without, every third
      // has an approved community photo and every seventh a pending one; one in 50 is not approved.
      await client.query(
        `INSERT INTO libraries (slug, name, address, city, country, postal_code, location, status, photo_key,
                                created_at)
         SELECT 'walk-' || i, 'Shelf ' || i, 'Street 1', (ARRAY['Lille', 'Bonn'])[1 + i % 2],
                (ARRAY['FR', 'DE'])[1 + i % 2], '55555',
                ST_SetSRID(ST_MakePoint(5 + i % 50 * 0.01, 48 + i / 50 * 0.01), 4326)::geography,
                CASE WHEN i % 50 = 7 THEN 'pending' ELSE 'approved' END,
                CASE WHEN i % 5 > 0 THEN 'photos/' || i || '.jpg' END,
                timestamptz '2025-01-01' + (i * 7919 % 3000) * interval '1 hour'
         FROM generate_series(1, 3000) AS i`,
      );
      await client.query(
        `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status)
         SELECT l.id, 'community/' || l.id || '.jpg', 'community/' || l.id || '-t.jpg',
                CASE WHEN l.id % 3 = 0 THEN 'approved' ELSE 'pending' END
         FROM libraries l WHERE l.slug LIKE 'walk-%' AND l.photo_key IS NULL AND (l.id % 3 = 0 OR l.id % 7 = 0)`,
      );
      await client.query('VACUUM ANALYZE libraries');
      await client.query('VACUUM ANALYZE library_photos');
    });
  });

  const explain = (statement: { text: string; params: unknown[] }): Promise<PlanNode> =>
    explainGeneric(db.url, statement, 'walked');

  /** The slugs of the approved libraries of `where`, newest first, as a plain reading gives them. */
  async function plain(where: string, limit: number, offset: number): Promise<string[]> {
    return withClient(db.url, async (client) => {
      const { rows } = await client.query<{ slug: string }>(
        `SELECT slug FROM libraries l WHERE status = 'approved' AND ${where}
         ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      );
      return rows.map((row) => row.slug);
    });
  }

  const photo = `(l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
      WHERE p.library_id = l.id AND p.status = 'approved'))`;
  const cases: [string, LibrarySearch, string][] = [
    ['', {}, 'true'],
    ['country=de', { country: 'DE' }, `country = 'DE'`],
    ['has_photo=true', { hasPhoto: true }, photo],
    ['has_photo=false', { hasPhoto: false }, `NOT ${photo}`],
    ['country=fr&has_photo=true', { country: 'FR', hasPhoto: true }, `country = 'FR' AND ${photo}`],
    [
      'country=de&has_photo=false',
      { country: 'DE', hasPhoto: false },
      `country = 'DE' AND NOT ${photo}`,
    ],
  ];

  it('walks index entries only (but for has_photo=true): no library row is read for the rows a page skips', async () => {
    for (const [, search] of cases) {
      for (const [statement, alone] of [
        [countAndPageQuery(search, null, 20, 400), false],
        [pageQuery(search, null, 20, 400), true],
      ] as const) {
        const nodes = nodesOf(await explain(statement));
        const walks = nodes.filter(
          (node) =>
            node['Index Name']?.startsWith('libraries_') && node['Index Name'] !== 'libraries_pkey',
        );
        expect(walks.length).toBeGreaterThan(0);
        // has_photo=false walks the libraries without a primary photo (migrations 1768002000000, 1768110000000).
        if (search.hasPhoto === false)
          expect(walks.map((node) => node['Index Name'])).toContain(
            search.country
              ? 'libraries_approved_without_photo_country_created_idx'
              : 'libraries_approved_without_photo_created_idx',
          );
        // The walk is index-only (has_photo=true: the walk's own index, its rows for photo_key); no library is read
        // whole but by primary key.
        if (search.hasPhoto !== true)
          expect({ search, walks: walks.map((node) => node['Node Type']) }).toEqual({
            search,
            walks: walks.map(() => 'Index Only Scan'),
          });
        expect(
          nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'libraries'),
        ).toEqual([]);
        // Alone, the page reads libraries by primary key for its own rows only.
        if (alone)
          for (const node of nodes.filter((n) => n['Index Name'] === 'libraries_pkey'))
            expect(node['Actual Loops']).toBeLessThanOrEqual(20);
      }
    }
  });

  it('answers every page as a plain reading does, past the end too', async () => {
    for (const [query, , where] of cases) {
      for (const [page, size] of [
        [1, 20],
        [3, 10],
        [9, 50],
        [40, 20],
      ]) {
        const res = await request(t.http)
          .get(`/api/v1/libraries/?${query}&page=${page}&page_size=${size}`)
          .expect(200);
        const total = (await plain(where, 100_000, 0)).length;
        expect(res.body.pagination.total).toBe(total);
        const last = Math.max(1, Math.ceil(total / size));
        const effective = Math.min(page, last);
        expect(res.body.pagination.page).toBe(effective);
        expect({
          query,
          page,
          slugs: res.body.items.map((item: { slug: string }) => item.slug),
        }).toEqual({
          query,
          page,
          slugs: await plain(where, size, (effective - 1) * size),
        });
      }
    }
  });
});
