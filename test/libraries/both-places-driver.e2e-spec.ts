/**
 * A list of both places finds its pairs from the city's unless the postal code's libraries are fewer than a twentieth
 * of the city's (issue 22, brief 22e): a city's pairs are one range of library_place_pairs' primary key, each matching
 * postal code a probe of its index. At 1M `has_photo=true&city=Köln&postal_code=109` probed 2,405 postal codes
 * (7.8 ms) where Köln's pairs took 0.5. The answers are a plain reading's.
 */
import request from 'supertest';
import { bothPlacesCountAndPageQuery, type LibrarySearch } from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { explainGeneric, indexLoops, nodesOf } from '../support/plans.js';
import { useTestSuite } from '../support/suite.js';

describe('both places: which place finds the pairs', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      // Kölnburg: 2,000 libraries, 105 of them with a postal code containing `109` (10900–10909, and 50109 of
      // 50000–50399); elsewhere 300 postal codes containing `109`, one library each. `109` has 405 libraries, fewer
      // than the city's 2,000 but not a twentieth.
      await client.query(
        `INSERT INTO libraries (slug, name, address, city, country, postal_code, location, status, created_at)
         SELECT 'koeln-' || i, 'Schrank ' || i, 'Weg 1', 'Kölnburg', 'DE',
                CASE WHEN i <= 100 THEN (10900 + i % 10)::text ELSE (50000 + i % 400)::text END,
                ST_SetSRID(ST_MakePoint(6.9 + i * 0.0001, 50.9), 4326)::geography, 'approved',
                timestamptz '2025-01-01' + i * interval '1 hour'
         FROM generate_series(1, 2000) AS i
         UNION ALL
         SELECT 'other-' || i, 'Schrank ' || i, 'Weg 2', 'Ort ' || i, 'DE', '2' || lpad(i::text, 3, '0') || '109',
                ST_SetSRID(ST_MakePoint(7 + i * 0.001, 51), 4326)::geography, 'approved',
                timestamptz '2025-03-01' + i * interval '1 hour'
         FROM generate_series(1, 300) AS i`,
      );
      await client.query('VACUUM ANALYZE libraries');
      await client.query('VACUUM ANALYZE library_place_pairs');
    });
  });

  it('reads the city’s pairs when the postal code’s libraries are not far fewer', async () => {
    const search: LibrarySearch = { city: 'köln', postalCode: '109' };
    const plan = await explainGeneric(
      db.url,
      bothPlacesCountAndPageQuery(search, null, 20, 0),
      'pairs_read',
    );
    const loops = (index: string) => indexLoops(plan, index);
    expect(loops('library_place_pairs_postal_code_idx')).toBe(0);
    expect(loops('library_place_pairs_pkey')).toBeGreaterThan(0);

    const res = await request(t.http)
      .get('/api/v1/libraries/?city=köln&postal_code=109&page_size=50&page=2')
      .expect(200);
    expect(res.body.pagination.total).toBe(105);
    const plain = await withClient(db.url, (client) =>
      client.query<{ slug: string }>(
        `SELECT slug FROM libraries WHERE status = 'approved' AND lower(city) LIKE '%köln%'
           AND postal_code LIKE '%109%' ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET 50`,
      ),
    );
    expect(res.body.items.map((item: { slug: string }) => item.slug)).toEqual(
      plain.rows.map((row) => row.slug),
    );
  });

  it('with a country, reads the pairs of a two-character postal code of few libraries from its values', async () => {
    // `38`: 14 of Kölnburg's postal codes (50038, 50138, …, 50380–50389) and 3 others, under 100 libraries, fewer than
    // a twentieth of the city's 2,000. Without a country two characters read every postal code, so the city drives;
    // with one they are the country's values that contain them (library_postal_code_counts_grams_idx).
    const search: LibrarySearch = { city: 'köln', postalCode: '38', country: 'de' };
    const plan = await explainGeneric(
      db.url,
      bothPlacesCountAndPageQuery(search, null, 20, 0),
      'pairs_grams',
    );
    const loops = (index: string) => indexLoops(plan, index);
    expect(loops('library_place_pairs_pkey')).toBe(0);
    expect(loops('library_place_pairs_postal_code_idx')).toBeGreaterThan(0);

    const res = await request(t.http)
      .get('/api/v1/libraries/?city=köln&postal_code=38&country=de&page_size=10&page=2')
      .expect(200);
    const plain = await withClient(db.url, (client) =>
      client.query<{ slug: string }>(
        `SELECT slug FROM libraries WHERE status = 'approved' AND lower(city) LIKE '%köln%'
           AND postal_code LIKE '%38%' AND country = 'DE' ORDER BY created_at DESC, id DESC`,
      ),
    );
    expect(plain.rows.length).toBeGreaterThan(20);
    expect(plain.rows.length).toBeLessThan(100);
    expect(res.body.pagination.total).toBe(plain.rows.length);
    expect(res.body.items.map((item: { slug: string }) => item.slug)).toEqual(
      plain.rows.slice(10, 20).map((row) => row.slug),
    );
  });
  it('computes the choice once, for both branches of the pairs', async () => {
    // `109` has three characters, so its count reads the postal codes' values; as a subquery in each branch it was
    // computed twice.
    const plan = await explainGeneric(
      db.url,
      bothPlacesCountAndPageQuery({ city: 'köln', postalCode: '109' }, null, 20, 0),
      'choice_once',
    );
    const reads = nodesOf(plan)
      .filter((node) => node['Relation Name'] === 'library_postal_code_counts')
      .reduce((sum, node) => sum + (node['Actual Loops'] ?? 0), 0);
    expect(reads).toBe(1);
  });

  it('with a country, reads the pairs rather than walk the country past PLACE_WALK_ENTRIES_IN_COUNTRY entries', async () => {
    // 105 libraries of 2,300 in DE, 11 pairs: the page ending at 100 walks about 2,200 entries, more than the
    // country's floor of 1,500 (it walked up to 5,000, though a pair costs about what a value does).
    const search: LibrarySearch = { city: 'köln', postalCode: '109', country: 'de' };
    const plan = await explainGeneric(
      db.url,
      bothPlacesCountAndPageQuery(search, null, 20, 80),
      'pairs_in_country',
    );
    expect(indexLoops(plan, 'libraries_approved_country_created_places_idx')).toBe(0);
    expect(indexLoops(plan, 'libraries_approved_postal_code_created_idx')).toBeGreaterThan(0);
    const res = await request(t.http)
      .get('/api/v1/libraries/?city=köln&postal_code=109&country=de&page=5')
      .expect(200);
    const plain = await withClient(db.url, (client) =>
      client.query<{ slug: string }>(
        `SELECT slug FROM libraries WHERE status = 'approved' AND lower(city) LIKE '%köln%'
           AND postal_code LIKE '%109%' AND country = 'DE' ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 80`,
      ),
    );
    expect(res.body.items.map((item: { slug: string }) => item.slug)).toEqual(
      plain.rows.map((row) => row.slug),
    );
  });
});
