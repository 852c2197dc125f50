import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withClient } from '../support/database.js';
import { useCliSuite } from './cli-support.js';

const point = (lng: number, lat: number) => ({ type: 'Point', coordinates: [lng, lat] });

/** A map-database export: one feature per case, everything else an importer could be tempted to trust. */
const EXPORT = {
  type: 'FeatureCollection',
  features: [
    {
      type: 'Feature',
      id: 'ignored-because-@id-wins',
      geometry: point(7.8494, 47.9959),
      properties: {
        '@id': 'node/1001',
        name: 'Bücherschrank am Augustinerplatz',
        description: 'Ein alter Kühlschrank voller Bücher.',
        'addr:street': 'Augustinerplatz',
        'addr:housenumber': '3',
        'addr:city': 'Freiburg im Breisgau',
        'addr:postcode': '79098',
        'addr:country': 'de',
        wheelchair: 'limited',
        capacity: '120',
        indoor: 'no',
        lit: 'yes',
        website: 'https://example.org/bookcase',
        operator: 'Bürgerverein Oberwiehre',
        brand: 'Bücherschrank-Netz',
        amenity: 'public_bookcase',
        opening_hours: '24/7',
        // Never taken from a file (spec rules 2 and 3):
        mapdb_submission_allowed: true,
        mapdb_submission_allowed_at: '2026-01-01T00:00:00Z',
        submission_origin: 'user',
        status: 'pending',
        created_by: 1,
        source: 'from-the-file',
      },
    },
    {
      type: 'Feature',
      id: 'node/1002',
      geometry: point(-0.1276, 51.5072),
      properties: {
        'addr:city': 'London',
        'addr:country': 'gb',
        'addr:housenumber': '12',
        wheelchair: 'sometimes',
        capacity: '-5',
        indoor: 'unknown',
        lit: 'YES',
      },
    },
    {
      type: 'Feature',
      geometry: point(13.405, 52.52),
      properties: { '@id': 'node/1003', 'addr:country': 'DE', name: 'No city' },
    },
    {
      type: 'Feature',
      geometry: point(13.405, 52.52),
      properties: { '@id': 'node/1004', 'addr:city': 'Berlin', name: 'No country' },
    },
    {
      type: 'Feature',
      geometry: point(200, 52.52),
      properties: { '@id': 'node/1005', 'addr:city': 'Berlin', 'addr:country': 'DE' },
    },
    {
      type: 'Feature',
      geometry: {
        type: 'LineString',
        coordinates: [
          [13.4, 52.5],
          [13.5, 52.6],
        ],
      },
      properties: { '@id': 'way/1006', 'addr:city': 'Berlin', 'addr:country': 'DE' },
    },
    {
      type: 'Feature',
      geometry: point(7.85, 47.99),
      properties: {
        '@id': 'node/1001',
        'addr:city': 'Freiburg',
        'addr:country': 'DE',
        name: 'Same node again',
      },
    },
    {
      type: 'Feature',
      id: 3007,
      geometry: point(13.3777, 52.5163),
      properties: {
        'addr:street': 'Pariser Platz',
        'addr:city': 'Berlin',
        'addr:country': 'DE',
        website: 'www.example.com/pariser-platz',
      },
    },
  ],
};

describe('import-geojson (npm run cli -- import-geojson FILE [--source S])', () => {
  const cli = useCliSuite('import');
  const { db } = cli;

  const writeJson = (name: string, value: unknown) => {
    const file = join(cli.dir, name);
    writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };

  const rows = (where = 'true', params: unknown[] = []) =>
    withClient(db.url, async (client) => {
      const { rows: found } = await client.query(
        `SELECT slug, name, description, address, city, country, postal_code, wheelchair_accessible, capacity,
                is_indoor, is_lit, website, operator, brand, source, external_id, status, submission_origin,
                mapdb_submission_allowed, mapdb_submission_allowed_at, created_by, ai_generated_fields,
                photo_key, ST_X(location::geometry) AS lng, ST_Y(location::geometry) AS lat
           FROM libraries WHERE ${where} ORDER BY id`,
        params,
      );
      return found;
    });

  it('imports Point features with provenance import, the permission always false, and counts what it skips', async () => {
    const file = writeJson('export.geojson', EXPORT);
    const result = await cli.run(['import-geojson', file, '--source', 'osm-2026-06']);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      'Added 3, skipped as duplicate 1 (1 duplicate external_id), invalid 4 (2 no city or country, 2 invalid geometry)',
    );

    const imported = await rows();
    expect(imported).toHaveLength(3);
    for (const row of imported) {
      expect(row).toMatchObject({
        status: 'approved',
        submission_origin: 'import',
        mapdb_submission_allowed: false,
        mapdb_submission_allowed_at: null,
        created_by: null,
        source: 'osm-2026-06',
        ai_generated_fields: [],
        photo_key: null,
      });
    }
    expect(imported[0]).toMatchObject({
      slug: 'freiburg-im-breisgau-augustinerplatz-3-bucherschrank-am-augustinerplatz',
      name: 'Bücherschrank am Augustinerplatz',
      description: 'Ein alter Kühlschrank voller Bücher.',
      address: 'Augustinerplatz 3',
      city: 'Freiburg im Breisgau',
      country: 'DE',
      postal_code: '79098',
      wheelchair_accessible: 'limited',
      capacity: 120,
      is_indoor: false,
      is_lit: true,
      website: 'https://example.org/bookcase',
      operator: 'Bürgerverein Oberwiehre',
      brand: 'Bücherschrank-Netz',
      external_id: 'node/1001',
    });
    expect(imported[0].lng).toBeCloseTo(7.8494, 6);
    expect(imported[0].lat).toBeCloseTo(47.9959, 6);
    expect(imported[1]).toMatchObject({
      slug: 'london',
      name: '',
      description: '',
      address: '',
      city: 'London',
      country: 'GB',
      postal_code: '',
      wheelchair_accessible: '',
      capacity: null,
      is_indoor: null,
      is_lit: true,
      website: '',
      operator: '',
      brand: '',
      external_id: 'node/1002',
    });
    expect(imported[2]).toMatchObject({
      address: 'Pariser Platz',
      external_id: '3007',
      website: 'https://www.example.com/pariser-platz',
    });
    const jobs = await withClient(db.url, (client) =>
      client.query('SELECT count(*)::int AS n FROM enrichment_jobs'),
    );
    expect(jobs.rows[0].n).toBe(0);
  });

  it('imports nothing the second time: every external_id is already present', async () => {
    const file = writeJson('export.geojson', EXPORT);
    const result = await cli.run(['import-geojson', file, '--source', 'osm-2026-06']);

    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      'Added 0, skipped as duplicate 4 (4 duplicate external_id), invalid 4 (2 no city or country, 2 invalid geometry)',
    );
    expect(await rows()).toHaveLength(3);
  });

  it('gives features at the same place distinct slugs, also next to existing rows, and leaves source empty without --source', async () => {
    const feature = (id: string) => ({
      type: 'Feature',
      geometry: point(11.5755, 48.1374),
      properties: {
        '@id': id,
        'addr:city': 'München',
        'addr:country': 'DE',
        'addr:street': 'Marienplatz',
      },
    });
    const first = writeJson('munich-1.geojson', {
      type: 'FeatureCollection',
      features: [feature('n/1'), feature('n/2')],
    });
    const second = writeJson('munich-2.geojson', {
      type: 'FeatureCollection',
      features: [feature('n/3')],
    });

    expect((await cli.run(['import-geojson', first])).stdout.trim()).toBe(
      'Added 2, skipped as duplicate 0, invalid 0',
    );
    expect((await cli.run(['import-geojson', second])).stdout.trim()).toBe(
      'Added 1, skipped as duplicate 0, invalid 0',
    );

    const munich = await rows("city = 'München'");
    expect(munich.map((row) => row.slug)).toEqual([
      'munchen-marienplatz',
      'munchen-marienplatz-2',
      'munchen-marienplatz-3',
    ]);
    expect(munich.map((row) => row.source)).toEqual(['', '', '']);
  });

  it('imports a file of features without ids only once: they are matched on name, position and address', async () => {
    const shelf = (lng: number, lat: number, properties: Record<string, string>) => ({
      type: 'Feature',
      geometry: point(lng, lat),
      properties: { 'addr:city': 'Idless', 'addr:country': 'NL', ...properties },
    });
    const features = [
      shelf(4.9, 52.37, {
        name: 'Boekenkast Noord',
        'addr:street': 'Damrak',
        'addr:housenumber': '1',
      }),
      // 50 m away: another bookcase of the same name.
      shelf(4.9, 52.37045, { name: 'Boekenkast Noord' }),
      // The same place and name, but another address: not the same.
      shelf(4.9, 52.37, {
        name: 'Boekenkast Noord',
        'addr:street': 'Rokin',
        'addr:housenumber': '9',
      }),
      // The first one again within the file (case, accents, punctuation and 3 m do not matter).
      shelf(4.90004, 52.37, { name: 'boekenkast  NOORD!' }),
      shelf(4.91, 52.38, { name: '' }),
    ];
    const file = writeJson('idless.geojson', { type: 'FeatureCollection', features });
    const first = await cli.run(['import-geojson', file]);
    expect(first.stdout.trim()).toBe(
      'Added 4, skipped as duplicate 1 (1 duplicate name and position), invalid 0',
    );
    const second = await cli.run(['import-geojson', file]);
    expect([second.code, second.stdout.trim()]).toEqual([
      0,
      'Added 0, skipped as duplicate 5 (5 duplicate name and position), invalid 0',
    ]);
    expect(await rows("city = 'Idless'")).toHaveLength(4);
  });

  it.each([
    ['a Feature', { type: 'Feature', geometry: point(1, 2), properties: {} }],
    ['a FeatureCollection without features', { type: 'FeatureCollection' }],
    ['a JSON array', []],
  ])('refuses %s with exit code 1', async (_label, content) => {
    const before = (await rows()).length;
    const result = await cli.run(['import-geojson', writeJson('wrong.json', content)]);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /import-geojson failed: .*wrong\.json is not a GeoJSON FeatureCollection/,
    );
    expect(await rows()).toHaveLength(before);
  });

  it('explains a file that is not JSON, a missing file and a missing argument', async () => {
    const garbage = await cli.run([
      'import-geojson',
      writeJson('garbage.geojson', '{"type": "Feature'),
    ]);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/garbage\.geojson is not valid JSON/);

    const missing = await cli.run(['import-geojson', join(cli.dir, 'nope.geojson')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*nope\.geojson \(ENOENT\)/);

    const usage = await cli.run(['import-geojson']);
    expect(usage.code).toBe(64);
    expect(usage.stderr).toMatch(/import-geojson FILE/);
  });
});
