/**
 * The list's statements, exactly as list-query.ts builds them for ApprovedListRepository, use their indexes: proximity the GiST index
 * on location, `q` library_search_prefixes for its counts and the newest-first index with the tsvector or the name's GIN
 * index for its page, `search` library_search_tokens for its count (alone) or the trigram index on search_text. A few thousand rows
 * (generate_series) and VACUUM ANALYZE make the planner choose honestly; sequential scans are NOT disabled.
 */
import request from 'supertest';
import {
  bothPlacesCountAndPageQuery,
  circleGridCountAndPageQuery,
  countAndPageQuery,
  countQuery,
  pageQuery,
  placeCountAndPageQuery,
  placeFilter,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { explainGeneric, indexLoops, nodesOf, type PlanNode } from '../support/plans.js';
import { useTestSuite } from '../support/suite.js';

const ROWS = 6000;

function relationsOf(plan: PlanNode): string[] {
  return nodesOf(plan).flatMap((node) => (node['Relation Name'] ? [node['Relation Name']] : []));
}

/** The nodes of an analysed plan that ran at least once. */
function executed(plan: PlanNode): PlanNode[] {
  return nodesOf(plan).filter((node) => (node['Actual Loops'] ?? 0) > 0);
}

function indexesOf(plan: PlanNode): string[] {
  return [
    ...(plan['Index Name'] ? [plan['Index Name']] : []),
    ...(plan.Plans ?? []).flatMap(indexesOf),
  ];
}

function nodeTypes(plan: PlanNode): string[] {
  return [plan['Node Type'], ...(plan.Plans ?? []).flatMap(nodeTypes)];
}

describe('query plans of the library list', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      await client.query(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status, created_at)
         SELECT 'plan-' || i,
                'Bookcase ' || i,
                'Shelf number ' || i || ' with ' || (ARRAY['novels', 'comics', 'poetry', 'maps'])[1 + i % 4],
                'Street ' || (i % 300) || ' ' || i,
                (ARRAY['Berlin', 'Hamburg', 'Wien', 'Zürich', 'Lyon', 'Milano'])[1 + i % 6],
                (ARRAY['DE', 'DE', 'AT', 'CH', 'FR', 'IT'])[1 + i % 6],
                lpad((i * 37 % 99999)::text, 5, '0'),
                ST_SetSRID(ST_MakePoint(-5 + (i * 7919 % 3000) / 100.0, 40 + (i * 104729 % 2000) / 100.0), 4326)::geography,
                CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'approved' END,
                timestamptz '2025-01-01' + i * interval '1 hour'
         FROM generate_series(1, $1) AS i`,
        [ROWS],
      );
      await client.query(
        `UPDATE libraries SET name = 'Zauberschrank ' || id, address = 'Quokkaweg ' || id
         WHERE slug IN ('plan-11', 'plan-1234', 'plan-4321')`,
      );
      // A primary photo for a quarter (has_photo below).
      await client.query(
        `UPDATE libraries SET photo_key = 'photos/' || id || '.jpg' WHERE slug LIKE 'plan-%' AND id % 4 = 0`,
      );
      // VACUUM also merges the GIN indexes' pending lists, as autovacuum does on a live table; until then the
      // planner prices a GIN scan of freshly inserted rows as a full read of the pending list.
      await client.query('VACUUM ANALYZE libraries');
      // The photos' updates of the place counts, vacuumed too (their dead rows drew plans to other indexes).
      await client.query(
        'VACUUM ANALYZE library_city_counts, library_postal_code_counts, library_place_grams',
      );
    });
  });

  async function explain(
    statement: { text: string; params: unknown[] },
    options = 'FORMAT JSON',
  ): Promise<PlanNode> {
    return withClient(db.url, async (client) => {
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (${options}) ${statement.text}`,
        statement.params,
      );
      return rows[0]['QUERY PLAN'][0].Plan;
    });
  }

  const analyze = (statement: { text: string; params: unknown[] }) =>
    explain(statement, 'ANALYZE, FORMAT JSON');

  const page = (search: LibrarySearch) => explain(pageQuery(search, null, 20, 0));
  const count = (search: LibrarySearch) => explain(countQuery(search));

  it('proximity (nearest first) walks libraries_approved_unit_vector_idx', async () => {
    const plan = await page({ near: { lat: 50, lng: 10 } });
    expect(indexesOf(plan)).toEqual(['libraries_approved_unit_vector_idx']);
    expect(nodeTypes(plan)).not.toContain('Seq Scan');
  });

  it('proximity with a small radius: the page walks libraries_approved_unit_vector_idx, the count reads libraries_approved_point_idx alone', async () => {
    // 300 m: too few of the grid's finest cells across for circleCells, so the count tests every library.
    const near = { lat: 50, lng: 10, radiusMeters: 300 };
    const pagePlan = await page({ near });
    expect(indexesOf(pagePlan)).toEqual(['libraries_approved_unit_vector_idx']);
    expect(nodeTypes(pagePlan)).not.toContain('Seq Scan');
    const countPlan = await count({ near });
    expect(indexesOf(countPlan)).toEqual(['libraries_approved_point_idx']);
    expect(nodeTypes(countPlan)).toContain('Index Only Scan');
    // The single statement of count and page keeps both plans.
    const both = await explain(countAndPageQuery({ near }, null, 20, 0));
    expect(indexesOf(both).sort()).toEqual([
      'libraries_approved_point_idx',
      'libraries_approved_unit_vector_idx',
    ]);
    expect(nodeTypes(both)).not.toContain('Seq Scan');
  });

  it('proximity with a larger radius: the count reads the map grid by rows and the edge libraries index-only', async () => {
    const near = { lat: 50, lng: 10, radiusMeters: 20_000 };
    // The grid by one of its two indexes on (level, cy, cx) or (level, cx, cy): either reads one range per run.
    const grid = expect.stringMatching(/^library_map_cells_(row_idx|pkey)$/);
    // The plan holds both counts (GRID_COUNT_FROM chooses at run time) and the coarse cells' bound.
    const distinct = (plan: PlanNode) => [...new Set(indexesOf(plan))].sort();
    const countPlan = await count({ near });
    expect(distinct(countPlan)).toEqual(['libraries_approved_point_idx', grid]);
    expect(nodeTypes(countPlan)).toContain('Index Only Scan');
    expect(nodeTypes(countPlan)).not.toContain('Seq Scan');
    const both = await explain(countAndPageQuery({ near }, null, 20, 0));
    expect(distinct(both)).toEqual([
      'libraries_approved_point_idx',
      'libraries_approved_unit_vector_idx',
      grid,
    ]);
    expect(nodeTypes(both)).not.toContain('Seq Scan');
    // The grid's count and the page, sent when the coarse cells hold GRID_COUNT_FROM libraries or more.
    const second = await explain(circleGridCountAndPageQuery({ near }, null, 20, 0)!);
    expect(distinct(second)).toEqual([
      'libraries_approved_point_idx',
      'libraries_approved_unit_vector_idx',
      grid,
    ]);
    expect(nodeTypes(second)).not.toContain('Seq Scan');
  });

  it('a place filter with country reads that country’s place values by index, not every value', async () => {
    await withClient(db.url, (client) =>
      client.query('ANALYZE library_postal_code_counts, library_city_counts'),
    );
    // One or two characters: the country's values that contain them, from their short grams' index (it read every
    // value of the country from library_postal_code_counts_country_idx).
    for (const [search, index] of [
      [{ postalCode: '12', country: 'at' }, 'library_postal_code_counts_grams_idx'],
      [{ postalCode: '1', country: 'at', hasPhoto: true }, 'library_postal_code_counts_grams_idx'],
      [{ city: 'wi', postalCode: '12', country: 'at' }, 'library_postal_code_counts_grams_idx'],
    ] as const) {
      const plan = await explain(countAndPageQuery(search, null, 20, 0));
      expect({ search, indexes: indexesOf(plan) }).toEqual({
        search,
        indexes: expect.arrayContaining([index]),
      });
      const scanned = nodesOf(plan).filter(
        (node) =>
          node['Node Type'] === 'Seq Scan' &&
          node['Relation Name'] === 'library_postal_code_counts',
      );
      expect({ search, scanned }).toEqual({ search, scanned: [] });
    }
  });

  it('a place filter of one or two characters without country reads the values that contain them from the short grams’ index', async () => {
    // Without a country the trigram index narrowed nothing for them: the page by value read and rechecked every
    // value of the place (at 100k `postal_code=55&page=18`: 38,070 postal codes for 647).
    for (const search of [
      { postalCode: '12' },
      { postalCode: '7', hasPhoto: false },
    ] satisfies LibrarySearch[]) {
      const statement = placeCountAndPageQuery(search, placeFilter(search)!, null, 5, 3, {
        entries: 0,
        upToTotal: false,
      });
      const plan = await explainGeneric(db.url, statement, 'short_values');
      const loops = (index: string) => indexLoops(plan, index);
      expect({ search, trigram: loops('library_postal_code_counts_trgm_idx') }).toEqual({
        search,
        trigram: 0,
      });
      expect({ search, grams: loops('library_postal_code_counts_grams_idx') }).toEqual({
        search,
        grams: 1,
      });
      const where = `postal_code LIKE '%${search.postalCode}%'${'hasPhoto' in search ? ' AND photo_key IS NULL' : ''}`;
      const [answer, plain] = await withClient(db.url, async (client) => [
        (await client.query<{ id: number }>(statement.text, statement.params)).rows,
        (
          await client.query<{ id: number }>(
            `SELECT id FROM libraries WHERE status = 'approved' AND ${where}
             ORDER BY created_at DESC, id DESC LIMIT 5 OFFSET 3`,
          )
        ).rows,
      ]);
      expect(plain).toHaveLength(5);
      expect({ search, ids: answer.map((row) => row.id) }).toEqual({
        search,
        ids: plain.map((row) => row.id),
      });
    }
  });

  it('a place filter walks the list for small values (postal codes) and reads the newest of each large one (cities)', async () => {
    await withClient(db.url, (client) =>
      client.query('ANALYZE library_postal_code_counts, library_city_counts'),
    );
    // No fixed budget: the choice is the values' estimate alone (thousands of one-library postal codes, six cities).
    const ran = async (search: LibrarySearch) =>
      executed(
        await analyze(
          placeCountAndPageQuery(search, placeFilter(search)!, null, 20, 0, {
            entries: 0,
            upToTotal: true,
          }),
        ),
      ).flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
    expect(await ran({ postalCode: '1' })).toContain('libraries_approved_created_places_idx');
    expect(await ran({ postalCode: '1' })).not.toContain(
      'libraries_approved_postal_code_created_idx',
    );
    expect(await ran({ city: 'ber' })).toContain('libraries_approved_city_created_idx');
    expect(await ran({ city: 'ber' })).not.toContain('libraries_approved_created_places_idx');
  });

  it('a city filter reads the newest of its city rather than walk past PLACE_WALK_ENTRIES_CITY entries', async () => {
    // Berlin: 900 of 5,400 approved libraries. Page 3 of 20 walks about 360 entries; by value it reads 60 of one city.
    const search: LibrarySearch = { city: 'ber' };
    const statement = placeCountAndPageQuery(search, placeFilter(search)!, null, 20, 40);
    const plan = await explainGeneric(db.url, statement, 'city_by_value');
    expect(indexLoops(plan, 'libraries_approved_created_places_idx')).toBe(0);
    expect(indexLoops(plan, 'libraries_approved_city_created_idx')).toBe(1);
    const res = await request(t.http).get('/api/v1/libraries/?city=ber&page=3').expect(200);
    const plain = await withClient(db.url, (client) =>
      client.query<{ id: number }>(
        `SELECT id FROM libraries WHERE status = 'approved' AND lower(city) LIKE '%ber%'
         ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 40`,
      ),
    );
    expect(res.body.items.map((item: { id: number }) => item.id)).toEqual(
      plain.rows.map((row) => row.id),
    );
  });

  it('a country’s later pages walk libraries_approved_country_created_places_idx (the country index without places is gone)', async () => {
    const [{ gone }] = await withClient(db.url, async (client) => {
      const { rows } = await client.query<{ gone: boolean }>(
        `SELECT to_regclass('libraries_approved_country_created_idx') IS NULL AS gone`,
      );
      return rows;
    });
    expect(gone).toBe(true);
    const plan = await explainGeneric(
      db.url,
      countAndPageQuery({ country: 'de' }, null, 20, 40),
      'country_walk',
    );
    expect(indexLoops(plan, 'libraries_approved_country_created_places_idx')).toBe(1);
  });

  it('a place filter with country walks that country’s libraries alone, index-only (one place or both)', async () => {
    const [{ n: austrian }] = await withClient(
      db.url,
      async (client) =>
        (
          await client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM libraries WHERE status = 'approved' AND country = 'AT'`,
          )
        ).rows,
    );
    for (const search of [
      { postalCode: '1', country: 'at' },
      { city: 'wi', postalCode: '1', country: 'at', hasPhoto: false },
    ] as LibrarySearch[]) {
      const filter = placeFilter(search);
      // The walk forced (a budget no page exceeds).
      const statement = filter
        ? placeCountAndPageQuery(search, filter, null, 20, 0, { entries: 1e9, upToTotal: false })
        : bothPlacesCountAndPageQuery(search, null, 20, 0, { driver: 'auto', walkEntries: 1e9 });
      const walks = executed(await analyze(statement)).filter((node) =>
        /^libraries_approved_(country_)?created_places_idx$/.test(node['Index Name'] ?? ''),
      );
      expect({
        search,
        walks: walks.map((node) => [node['Index Name'], node['Node Type']]),
      }).toEqual({
        search,
        walks: [['libraries_approved_country_created_places_idx', 'Index Only Scan']],
      });
      expect(walks[0]['Actual Rows'] ?? 0).toBeLessThanOrEqual(austrian);
    }
  });

  it('a place filter with has_photo reads no library row for the photo: libraries_approved_without_photo_idx tells it', async () => {
    // The nodes that read rows of `libraries` (not index-only).
    const rowReads = (nodes: PlanNode[]) =>
      nodes
        .filter(
          (node) =>
            node['Relation Name'] === 'libraries' && node['Node Type'] !== 'Index Only Scan',
        )
        .map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());
    for (const search of [
      { postalCode: '1', hasPhoto: true },
      { city: 'ber', hasPhoto: false, country: 'DE' },
      { city: 'ber', postalCode: '12', hasPhoto: true },
      { city: 'wi', postalCode: '1', hasPhoto: false },
    ] as LibrarySearch[]) {
      const filter = placeFilter(search);
      // One place: both page plans (the walk newest first, the newest of each value); both places have one.
      for (const entries of filter ? [0, 1e9] : [null]) {
        const statement =
          filter && entries !== null
            ? placeCountAndPageQuery(search, filter, null, 20, 0, { entries, upToTotal: false })
            : countAndPageQuery(search, null, 20, 0);
        const nodes = executed(await analyze(statement));
        expect({ search, entries, probed: indexesOf({ 'Node Type': '', Plans: nodes }) }).toEqual({
          search,
          entries,
          probed: expect.arrayContaining(['libraries_approved_without_photo_idx']),
        });
        // One node reads rows: the page's own (by primary key, or at this size a scan joined to the page).
        expect({ search, entries, rows: rowReads(nodes).length }).toEqual({
          search,
          entries,
          rows: 1,
        });
      }
    }
  });

  it('proximity with a radius where no box applies (near a pole) still uses libraries_location_idx', async () => {
    const plan = await count({ near: { lat: 89.5, lng: 10, radiusMeters: 100_000 } });
    expect(indexesOf(plan)).toContain('libraries_location_idx');
  });

  it('q of one word is counted from library_search_prefixes alone, of several words from library_search_bitmaps alone', async () => {
    const one = await count({ q: 'Zauberschrank' });
    expect(indexesOf(one)).toEqual(['library_search_prefixes_pkey']);
    expect(relationsOf(one)).toEqual(['library_search_prefixes']);
    for (const q of ['zauberschrank bookcase', 'bookcase shelf novels']) {
      const several = await count({ q });
      expect([q, indexesOf(several)]).toEqual([q, ['library_search_bitmaps_pkey']]);
      expect([q, relationsOf(several)]).toEqual([q, ['library_search_bitmaps']]);
    }
    // With `country` alone besides it, one word or several: the bitmaps and the country's.
    for (const q of ['bookcase', 'zauberschrank bookcase']) {
      const inCountry = await count({ q, country: 'DE' });
      expect([q, indexesOf(inCountry).sort()]).toEqual([
        q,
        ['library_country_bitmaps_pkey', 'library_search_bitmaps_pkey'],
      ]);
      expect([q, relationsOf(inCountry).sort()]).toEqual([
        q,
        ['library_country_bitmaps', 'library_search_bitmaps'],
      ]);
    }
    // A word longer than the prefixes kept (24 characters), or `q` with another filter: counted through GIN.
    for (const search of [
      { q: 'bookcase abcdefghijklmnopqrstuvwxyz' },
      { q: 'bookcase abcdefghijklmnopqrstuvwxyz', country: 'DE' },
      { q: 'zauberschrank bookcase', city: 'Berlin' },
      { q: 'zauberschrank bookcase', country: 'DE', hasPhoto: true },
    ]) {
      const counted = await count(search);
      expect([search, indexesOf(counted)[0]]).toEqual([search, 'libraries_search_vector_idx']);
      expect(relationsOf(counted).filter((name) => name.endsWith('_bitmaps'))).toEqual([]);
      expect(nodeTypes(counted)).not.toContain('Seq Scan');
    }
  });

  it('the page of q walks libraries_approved_created_search_idx for a common word and collects a rare one through a GIN index', async () => {
    // Nodes that ran: the parts not taken are planned but never executed.
    const ran = async (search: LibrarySearch) =>
      executed(await analyze(countAndPageQuery(search, null, 20, 0)));
    // Several common words too, whose matches PostgreSQL underestimates (the product of each word's share).
    for (const q of ['bookcase', 'poetry', 'bookcase shelf', 'shelf number with bookcase']) {
      const nodes = await ran({ q });
      expect([
        q,
        nodes
          .filter((node) => node['Index Name'] === 'libraries_approved_created_search_idx')
          .map((node) => node['Node Type']),
      ]).toEqual([q, ['Index Only Scan']]);
      expect(
        nodes.filter(
          (node) => node['Relation Name'] === 'libraries' && node['Node Type'] === 'Seq Scan',
        ),
      ).toEqual([]);
    }
    const rare = await ran({ q: 'zauberschrank' });
    expect(rare.map((node) => node['Index Name'])).toContain('libraries_approved_name_vector_idx');
    expect(rare.map((node) => node['Index Name'])).not.toContain(
      'libraries_approved_created_search_idx',
    );
    expect(
      rare.filter(
        (node) => node['Relation Name'] === 'libraries' && node['Node Type'] === 'Seq Scan',
      ),
    ).toEqual([]);
  });

  it('search with another filter uses libraries_search_text_trgm_idx for the page and the count', async () => {
    for (const plan of [
      await page({ search: 'quokka', country: 'de' }),
      await count({ search: 'Quokka', country: 'de' }),
    ]) {
      expect(indexesOf(plan)).toContain('libraries_search_text_trgm_idx');
      expect(nodeTypes(plan)).not.toContain('Seq Scan');
    }
  });

  it('search alone is counted from library_search_tokens; a rare one is found in one scan of the text’s trigram index', async () => {
    await withClient(db.url, (client) => client.query('VACUUM ANALYZE library_search_tokens'));
    const counted = await count({ search: 'Quokka' });
    expect(relationsOf(counted)).toEqual(['library_search_tokens']);
    expect(indexesOf(counted)).toEqual(['library_search_tokens_trgm_idx']);
    // With one space, from the pairs of neighbouring tokens.
    expect(indexesOf(await count({ search: 'Bookcase 12' }))).toEqual([
      'library_search_pairs_trgm_idx',
    ]);
    // Three matches each, in the address, in the name: too few for the bitmaps (their token rows' bits are summed),
    // so found in one scan, the name matches among them by the name's trigram index.
    for (const search of ['quokka', 'zauberschrank']) {
      const ran = executed(await analyze(countAndPageQuery({ search }, null, 20, 0)));
      const used = ran.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
      expect([search, [...new Set(used)].sort()]).toEqual([
        search,
        [
          'libraries_approved_name_trgm_idx',
          'libraries_pkey',
          'libraries_search_text_trgm_idx',
          'library_search_tokens_trgm_idx',
        ],
      ]);
    }
    // A common one walks the list newest first, index entries only.
    const common = executed(await analyze(countAndPageQuery({ search: 'bookcase' }, null, 20, 0)));
    expect(
      common
        .filter((node) => node['Relation Name'] === 'libraries')
        .map((node) => node['Node Type']),
    ).toEqual(expect.arrayContaining(['Index Only Scan']));
    expect(
      common
        .filter(
          (node) =>
            node['Relation Name'] === 'libraries' && node['Node Type'] !== 'Index Only Scan',
        )
        .map((node) => node['Index Name']),
    ).toEqual(['libraries_pkey']);
  });

  it('a substring search with another filter finds its matches once for the count and the page', async () => {
    for (const search of [{ search: 'quokka', country: 'de' }] as LibrarySearch[]) {
      const plan = await explain(countAndPageQuery(search, null, 20, 0));
      const matchIndexes = indexesOf(plan).filter((name) => name !== 'libraries_pkey');
      expect(matchIndexes).toHaveLength(1);
      expect(matchIndexes[0]).toBe('libraries_search_text_trgm_idx');
      expect(nodeTypes(plan)).not.toContain('Seq Scan');
    }
  });

  it('the statements the plans were taken from answer what the API answers', async () => {
    const res = await request(t.http).get('/api/v1/libraries/?search=quokka').expect(200);
    expect((res.body.items as { name: string }[]).map((item) => item.name).sort()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Zauberschrank \d+$/)]),
    );
    expect(res.body.pagination.total).toBe(3);
    const q = await request(t.http).get('/api/v1/libraries/?q=zauberschrank').expect(200);
    expect(q.body.pagination.total).toBe(3);
  });
});
