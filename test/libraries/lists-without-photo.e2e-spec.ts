/**
 * `has_photo=false` lists read only libraries that can match (issue 22, brief 22e), with the answers of a plain
 * reading:
 *
 * - with `country` and no place filter, the page walks libraries_approved_without_photo_country_created_idx
 *   (migration 1768002000000), not the country's every library (at 1M, a fifth have no primary photo: five rows
 *   fetched per match);
 * - a place filter's page by value (the sparse plan) probes only the matching values with a library without a primary
 *   photo (`approved > with_photo` in the place's counts), not every matching value.
 */
import request from 'supertest';
import {
  bothPlacesCountAndPageQuery,
  countAndPageQuery,
  placeCountAndPageQuery,
  placeFilter,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { explainGeneric, nodesOf, type PlanNode } from '../support/plans.js';
import { useTestSuite } from '../support/suite.js';

describe('lists without a photo', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      // 4,000 libraries in DE (odd) and FR (even), four in five with a photo; postal codes 700xx: 60 values (one
      // country each), 3 of them (70003 and 70057 in DE, 70030 in FR) holding libraries without a photo.
      await client.query(
        `INSERT INTO libraries (slug, name, address, city, country, postal_code, location, status, photo_key,
                                created_at)
         SELECT 'nophoto-' || i, 'Shelf ' || i, 'Street 1', (ARRAY['Lille', 'Bonn'])[1 + i % 2],
                (ARRAY['FR', 'DE'])[1 + i % 2],
                CASE WHEN i <= 600 THEN (70000 + i % 60)::text ELSE '55555' END,
                ST_SetSRID(ST_MakePoint(5 + i % 50 * 0.01, 48 + i / 50 * 0.01), 4326)::geography, 'approved',
                CASE WHEN (i <= 600 AND i % 60 NOT IN (3, 30, 57)) OR (i > 600 AND i % 5 > 0)
                     THEN 'photos/' || i || '.jpg' END,
                timestamptz '2025-01-01' + i * interval '1 hour'
         FROM generate_series(1, 4000) AS i`,
      );
      await client.query('VACUUM ANALYZE libraries');
    });
  });

  const explain = (statement: { text: string; params: unknown[] }): Promise<PlanNode> =>
    explainGeneric(db.url, statement, 'listed');

  /** The slugs of the approved libraries of `where`, newest first, as a plain reading gives them. */
  async function plain(where: string, limit: number, offset: number): Promise<string[]> {
    return withClient(db.url, async (client) => {
      const { rows } = await client.query<{ slug: string }>(
        `SELECT slug FROM libraries WHERE status = 'approved' AND photo_key IS NULL AND ${where}
         ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      );
      return rows.map((row) => row.slug);
    });
  }

  it('walks the country’s libraries without a photo', async () => {
    const plan = await explain(countAndPageQuery({ country: 'DE', hasPhoto: false }, null, 20, 40));
    expect(nodesOf(plan).map((node) => node['Index Name'])).toContain(
      'libraries_approved_without_photo_country_created_idx',
    );
    for (const page of [1, 3, 9]) {
      const res = await request(t.http)
        .get(`/api/v1/libraries/?country=de&has_photo=false&page=${page}`)
        .expect(200);
      expect(res.body.items.map((item: { slug: string }) => item.slug)).toEqual(
        await plain(`country = 'DE'`, 20, (page - 1) * 20),
      );
    }
  });

  it('probes only the matching values with a library without a photo', async () => {
    for (const search of [
      { postalCode: '700', hasPhoto: false },
      { postalCode: '700', hasPhoto: false, country: 'FR' },
    ] satisfies LibrarySearch[]) {
      const statement = placeCountAndPageQuery(search, placeFilter(search)!, null, 20, 0, {
        entries: 0,
        upToTotal: false,
      });
      const probes = nodesOf(await explain(statement)).filter(
        (node) => node['Index Name'] === 'libraries_approved_without_photo_postal_code_created_idx',
      );
      // The values 70003, 70030, 70057 (in FR: 70030), not all 60 (in FR: 30).
      expect(probes.map((node) => node['Actual Loops'])).toEqual([search.country ? 1 : 3]);
    }
    const res = await request(t.http)
      .get('/api/v1/libraries/?postal_code=700&has_photo=false&page_size=50')
      .expect(200);
    expect(res.body.pagination.total).toBe(30);
    expect(res.body.items.map((item: { slug: string }) => item.slug)).toEqual(
      await plain(`postal_code LIKE '%700%'`, 50, 0),
    );
  });
  it('reads by value only the libraries without a primary photo, from the place’s partial index', async () => {
    // 55555 (in both countries) and each city: 1,700 and 2,000 libraries, four in five with a photo. By value, the
    // page read every library of a value up to the page's end (60 with a photo or not) from the place's index and
    // probed libraries_approved_without_photo_idx for each; now 60 without a photo per value.
    for (const [search, index, where, values] of [
      [
        { postalCode: '5555', hasPhoto: false },
        'libraries_approved_without_photo_postal_code_created_idx',
        `postal_code LIKE '%5555%'`,
        2,
      ],
      [
        { city: 'bon', hasPhoto: false },
        'libraries_approved_without_photo_city_created_idx',
        `lower(city) LIKE '%bon%'`,
        1,
      ],
      [
        { city: 'lil', postalCode: '5555', hasPhoto: false, country: 'fr' },
        'libraries_approved_without_photo_postal_code_created_idx',
        `lower(city) LIKE '%lil%' AND postal_code LIKE '%5555%' AND country = 'FR'`,
        1,
      ],
    ] satisfies [LibrarySearch, string, string, number][]) {
      const statement =
        search.city && search.postalCode
          ? bothPlacesCountAndPageQuery(search, null, 20, 40, {
              driver: 'postal_code',
              walkEntries: 0,
            })
          : placeCountAndPageQuery(search, placeFilter(search)!, null, 20, 40, {
              entries: 0,
              upToTotal: false,
            });
      const nodes = nodesOf(await explain(statement));
      const read = nodes
        .filter((node) => node['Index Name'] === index)
        .reduce((sum, node) => sum + (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 0), 0);
      expect({ search, read }).toEqual({ search, read: 60 * values });
      const probed = nodes.filter(
        (node) =>
          node['Index Name'] === 'libraries_approved_without_photo_idx' &&
          (node['Actual Loops'] ?? 0) > 0,
      );
      expect({ search, probed }).toEqual({ search, probed: [] });
      const rows = await withClient(
        db.url,
        async (client) =>
          (await client.query<{ slug: string | null }>(statement.text, statement.params)).rows,
      );
      expect(rows.map((row) => row.slug)).toEqual(await plain(where, 20, 40));
    }
  });
});
