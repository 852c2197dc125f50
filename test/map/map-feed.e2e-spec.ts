/**
 * GET /libraries/map and /libraries/tiles/{z}/{x}/{y}.mvt on rows written with SQL: the counting invariant over
 * random boxes and zooms (fast-check) on the precomputed grid and on the grouped libraries, antimeridian boxes,
 * clamping, the list's filters, validation, ETag/304 and cache headers, pending and rejected rows never shown, the
 * grid kept exact by the triggers through approvals, rejections, moves and deletions, and tiles decoded with
 * @mapbox/vector-tile + pbf.
 */
import { VectorTile } from '@mapbox/vector-tile';
import fc from 'fast-check';
import { PbfReader } from 'pbf';
import request from 'supertest';
import { DENSE_FEED_FEATURES } from '../../src/map/map-grid.js';
import { MapRepository } from '../../src/map/map.repository.js';
import { encodeTile } from '../../src/map/tile-encoder.js';
import { createTestApp } from '../support/app.js';
import { withClient } from '../support/database.js';
import { insertLibraries, type LibraryFixture } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

interface Point {
  id: number;
  lng: number;
  lat: number;
  status: string;
  country: string;
  city: string;
  name: string;
  hasPhoto: boolean;
}

interface Feature {
  type: 'Feature';
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: Record<string, unknown>;
}

const LIBRARY_KEYS = ['city', 'country', 'id', 'name', 'slug', 'thumbnail_url'];
const CLUSTER_KEYS = ['bbox', 'cluster', 'count'];

/** A deterministic pseudo-random sequence (mulberry32), so the fixtures are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The box semantics of the issue, written independently of src/map: wrap, antimeridian, whole world, clamping. */
function inBox(p: { lng: number; lat: number }, bbox: number[]): boolean {
  const [minLng, minLat, maxLng, maxLat] = bbox;
  if (p.lat < Math.max(-90, minLat) || p.lat > Math.min(90, maxLat)) return false;
  const span = minLng <= maxLng ? maxLng - minLng : maxLng - minLng + 360;
  if (span >= 360) return true;
  const west = ((((minLng + 180) % 360) + 360) % 360) - 180;
  const east = west + span;
  return (p.lng >= west && p.lng <= east) || (p.lng + 360 >= west && p.lng + 360 <= east);
}

/** Great-circle distance in metres. */
function metres(a: [number, number], b: [number, number]): number {
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLng = (b[0] - a[0]) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
}

/** The XYZ tile of a point (Web Mercator, latitudes clamped as the grid clamps them). */
function tileOf(lng: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const clamped = Math.max(-85.0511287798066, Math.min(85.0511287798066, lat));
  const x = Math.min(n - 1, Math.floor(((lng + 180) / 360) * n));
  const y = 0.5 - Math.log(Math.tan(Math.PI / 4 + (clamped * Math.PI) / 360)) / (2 * Math.PI);
  return [x, Math.min(n - 1, Math.max(0, Math.floor(y * n)))];
}

describe('map feed and tiles', () => {
  let points: Point[] = [];

  const feed = (query: string) => request(t.http).get(`/api/v1/libraries/map?${query}`);
  const approved = () => points.filter((p) => p.status === 'approved');

  async function reloadPoints(): Promise<void> {
    points = await withClient(db.url, async (client) => {
      const { rows } = await client.query<Point>(
        `SELECT id, ST_X(location::geometry) AS lng, ST_Y(location::geometry) AS lat, status, country, city, name,
                (photo_key IS NOT NULL) AS "hasPhoto"
         FROM libraries`,
      );
      return rows;
    });
  }

  /** library_map_cells (per cell, country and photo state) equals a recount from scratch. */
  async function gridDrift(): Promise<number> {
    return withClient(db.url, async (client) => {
      const { rows } = await client.query<{ n: number }>(`
        WITH fresh AS (
          SELECT g.level, bookcase_map_cell(bookcase_map_x(ST_X(l.location::geometry)), g.level) AS cx,
                 bookcase_map_cell(bookcase_map_y(ST_Y(l.location::geometry)), g.level) AS cy, l.country,
                 (l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
                                                     WHERE p.library_id = l.id AND p.status = 'approved')) AS has_photo,
                 count(*)::int AS count, min(ST_X(l.location::geometry)) AS min_lng,
                 max(ST_Y(l.location::geometry)) AS max_lat, min(l.id) AS min_id
          FROM libraries l CROSS JOIN generate_series(0, 16) g(level)
          WHERE l.status = 'approved' GROUP BY 1, 2, 3, 4, 5)
        SELECT count(*)::int AS n FROM fresh f
        FULL JOIN library_map_cells c USING (level, cx, cy, country, has_photo)
        WHERE f.count IS DISTINCT FROM c.count OR f.min_lng IS DISTINCT FROM c.min_lng
           OR f.max_lat IS DISTINCT FROM c.max_lat OR f.min_id IS DISTINCT FROM c.min_id`);
      return rows[0].n;
    });
  }

  /** Checks one feed answer against the fixtures; answers the features. */
  function checkFeed(
    body: { type: string; features: Feature[] },
    bbox: number[],
    zoom: number,
    match: (p: Point) => boolean,
  ) {
    expect(body.type).toBe('FeatureCollection');
    const expected = approved().filter((p) => match(p) && inBox(p, bbox));
    let total = 0;
    const seen = new Set<number>();
    for (const feature of body.features) {
      expect(feature.type).toBe('Feature');
      expect(feature.geometry.type).toBe('Point');
      const props = feature.properties;
      if (props.cluster) {
        expect(Object.keys(props).sort()).toEqual(CLUSTER_KEYS);
        const count = props.count as number;
        expect(count).toBeGreaterThanOrEqual(2);
        total += count;
        const [w, s, e, n] = props.bbox as number[];
        const members = expected.filter(
          (p) => p.lng >= w && p.lng <= e && p.lat >= s && p.lat <= n,
        );
        expect(members.length).toBeGreaterThanOrEqual(count);
        if (zoom >= 18) expect(metres([w, s], [e, n])).toBeLessThan(200);
      } else {
        expect(Object.keys(props).sort()).toEqual(LIBRARY_KEYS);
        const id = props.id as number;
        expect(seen.has(id)).toBe(false);
        seen.add(id);
        const point = expected.find((p) => p.id === id);
        expect(point && [point.lng, point.lat]).toEqual(feature.geometry.coordinates);
        total += 1;
      }
    }
    expect(body.features.length).toBeLessThanOrEqual(2000);
    expect(total).toBe(expected.length);
    return body.features;
  }

  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    const random = seeded(17);
    const fixtures: LibraryFixture[] = [];
    const status = () => (random() < 0.15 ? 'pending' : random() < 0.1 ? 'rejected' : 'approved');
    // Berlin: 300 within ~20 km, denser in the middle; a tight knot of 12 within 50 m; two 250 m apart.
    for (let i = 0; i < 300; i += 1) {
      const r = 0.2 * random() ** 2;
      const a = random() * 2 * Math.PI;
      fixtures.push({
        lat: 52.52 + r * Math.cos(a),
        lng: 13.405 + r * 1.6 * Math.sin(a),
        status: status(),
        name: i % 3 === 0 ? `Bücherschrank Kiez ${i}` : `Tauschregal ${i}`,
        postal_code: `10${String(i % 90).padStart(3, '0')}`,
        photo_key: i % 4 === 0 ? `libraries/p${i}.jpg` : null,
        thumbnail_key: i % 4 === 0 ? `libraries/p${i}_thumb.jpg` : null,
      });
    }
    for (let i = 0; i < 12; i += 1) {
      fixtures.push({ lat: 52.5 + random() * 0.0003, lng: 13.3 + random() * 0.0003 });
    }
    fixtures.push({ lat: 52.6, lng: 13.2, name: 'Far West A' });
    fixtures.push({
      lat: 52.6,
      lng: 13.2 + 250 / (111320 * Math.cos((52.6 * Math.PI) / 180)),
      name: 'Far West B',
    });
    // Elsewhere: a few cities, the antimeridian (Fiji), the far north (Svalbard, beyond Web Mercator), the south.
    const places: [string, string, number, number, number][] = [
      ['Paris', 'FR', 48.8566, 2.3522, 40],
      ['Wien', 'AT', 48.2082, 16.3738, 30],
      ['Suva', 'FJ', -18.1248, 178.4501, 5],
      ['Taveuni', 'FJ', -16.8, 179.95, 6],
      ['Rabi', 'FJ', -16.5, -179.97, 6],
      ['Longyearbyen', 'NO', 87.5, 15.6, 4],
      ['Ushuaia', 'AR', -54.8019, -68.303, 3],
    ];
    for (const [city, country, lat, lng, count] of places) {
      for (let i = 0; i < count; i += 1) {
        fixtures.push({
          city,
          country,
          lat: lat + (random() - 0.5) * 0.1,
          lng: Math.max(-179.999, Math.min(179.999, lng + (random() - 0.5) * 0.1)),
          status: status(),
          name: `${city} ${i}`,
        });
      }
    }
    await insertLibraries(db.url, fixtures);
    await reloadPoints();
  });

  it('answers GeoJSON with every approved library of a box counted once, at every zoom (property)', async () => {
    // Uniform decimals (fc.double favours extremes such as 0 and tiny numbers, i.e. degenerate boxes).
    const between = (min: number, max: number) =>
      fc.integer({ min: 0, max: 1_000_000 }).map((v) => min + ((max - min) * v) / 1_000_000);
    const lng = between(-200, 200);
    const lat = between(-95, 95);
    const berlin = fc
      .tuple(between(12.9, 13.8), between(52.2, 52.8), between(0, 0.8), between(0, 0.5))
      .map(([w, s, dx, dy]) => [w, s, w + dx, s + dy]);
    const anywhere = fc
      .tuple(lng, lat, lng, lat)
      .map(([a, b, c, d]) => [a, Math.min(b, d), c, Math.max(b, d)]);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(berlin, anywhere),
        fc.integer({ min: 0, max: 22 }),
        async (bbox, zoom) => {
          const res = await feed(`bbox=${bbox.join(',')}&zoom=${zoom}`);
          if (res.status === 422) {
            // Only a box too large for a fine zoom is refused.
            expect(zoom).toBeGreaterThanOrEqual(18);
            expect(res.body.details.errors[0]).toMatchObject({
              loc: ['query', 'bbox'],
              type: 'bbox_too_large',
            });
            return;
          }
          expect(res.status).toBe(200);
          checkFeed(res.body, bbox, zoom, () => true);
        },
      ),
      { numRuns: 120, seed: 1717 },
    );
  });

  it('clusters dense points, keeps libraries 200 m apart separate from zoom 18, and is deterministic', async () => {
    const bbox = [13.1, 52.45, 13.7, 52.7];
    const low = await feed(`bbox=${bbox.join(',')}&zoom=9`).expect(200);
    expect(low.headers['content-type']).toMatch(/^application\/geo\+json/);
    const clusters = checkFeed(low.body, bbox, 9, () => true).filter((f) => f.properties.cluster);
    expect(clusters.length).toBeGreaterThan(0);
    const again = await feed(`bbox=${bbox.join(',')}&zoom=9`).expect(200);
    expect(again.text).toBe(low.text);

    const pair = [13.19, 52.595, 13.21, 52.605];
    const fine = await feed(`bbox=${pair.join(',')}&zoom=18`).expect(200);
    const names = checkFeed(fine.body, pair, 18, () => true).map((f) => f.properties.name);
    expect(names).toEqual(expect.arrayContaining(['Far West A', 'Far West B']));
    const coarse = await feed(`bbox=${pair.join(',')}&zoom=12`).expect(200);
    expect(coarse.body.features).toEqual([
      expect.objectContaining({ properties: expect.objectContaining({ cluster: true, count: 2 }) }),
    ]);
  });

  it('crosses the antimeridian and clamps a box larger than the world', async () => {
    const fiji = [179.5, -17.5, -179.5, -16];
    const res = await feed(`bbox=${fiji.join(',')}&zoom=14`).expect(200);
    const features = checkFeed(res.body, fiji, 14, () => true);
    const lngs = features.map((f) => f.geometry.coordinates[0]);
    expect(lngs.some((x) => x > 179)).toBe(true);
    expect(lngs.some((x) => x < -179)).toBe(true);
    // The same box written past 180.
    const unwrapped = await feed('bbox=179.5,-17.5,180.5,-16&zoom=14').expect(200);
    expect(unwrapped.text).toBe(res.text);

    const world = await feed('bbox=-500,-100,500,100&zoom=3').expect(200);
    checkFeed(world.body, [-180, -90, 180, 90], 3, () => true);
    const north = await feed('bbox=0,86,30,90&zoom=10').expect(200);
    checkFeed(north.body, [0, 86, 30, 90], 10, () => true);
    expect(north.body.features.length).toBeGreaterThan(0);
  });

  it("applies the list's filters with the list's semantics", async () => {
    const world = [-180, -90, 180, 90];
    const cases: [string, (p: Point) => boolean][] = [
      ['country=at', (p) => p.country === 'AT'],
      ['city=PAR', (p) => p.city.toLowerCase().includes('par')],
      ['has_photo=true', (p) => p.hasPhoto],
      ['has_photo=false', (p) => !p.hasPhoto],
      ['search=kiez', (p) => p.name.toLowerCase().includes('kiez')],
      ['q=bucherschrank', (p) => p.name.startsWith('Bücherschrank')],
      ['postal_code=1004', () => true],
    ];
    for (const [filter, match] of cases) {
      for (const zoom of [2, 11, 16]) {
        const res = await feed(`bbox=${world.join(',')}&zoom=${zoom}&${filter}`).expect(200);
        if (filter.startsWith('postal_code')) {
          const list = await request(t.http)
            .get(`/api/v1/libraries/?${filter}&page_size=1`)
            .expect(200);
          const count = (res.body.features as Feature[]).reduce(
            (sum, f) => sum + ((f.properties.count as number | undefined) ?? 1),
            0,
          );
          expect(count).toBe(list.body.pagination.total);
        } else {
          checkFeed(res.body, world, zoom, match);
        }
      }
    }
  });

  it('validates bbox and zoom (422 with loc)', async () => {
    const errorsOf = async (query: string) => {
      const res = await feed(query).expect(422);
      expect(res.body.message).toBe('Validation error.');
      return (res.body.details.errors as { loc: string[] }[]).map((e) => e.loc.join('.'));
    };
    expect(await errorsOf('zoom=3')).toContain('query.bbox');
    expect(await errorsOf('bbox=1,2,3&zoom=3')).toContain('query.bbox');
    expect(await errorsOf('bbox=a,b,c,d&zoom=3')).toContain('query.bbox');
    expect(await errorsOf('bbox=0,10,1,5&zoom=3')).toContain('query.bbox');
    expect(await errorsOf('bbox=0,1e999,1,5&zoom=3')).toContain('query.bbox');
    expect(await errorsOf('bbox=0,0,1,1')).toContain('query.zoom');
    expect(await errorsOf('bbox=0,0,1,1&zoom=23')).toContain('query.zoom');
    expect(await errorsOf('bbox=0,0,1,1&zoom=2.5')).toContain('query.zoom');
    expect(await errorsOf('bbox=0,0,1,1&zoom=3&country=DEU')).toContain('query.country');
    expect(await errorsOf('bbox=-180,-90,180,90&zoom=20')).toEqual(['query.bbox']);
  });

  it('sends ETag, answers 304 to If-None-Match, and shared-cache headers even with credentials', async () => {
    const query = 'bbox=16,48,17,49&zoom=10';
    const first = await feed(query).expect(200);
    expect(first.headers['cache-control']).toBe('public, max-age=0, s-maxage=60');
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const notModified = await feed(query).set('If-None-Match', `W/${etag}, "other"`).expect(304);
    expect(notModified.text ?? '').toBe('');
    expect(notModified.headers.etag).toBe(etag);
    const withToken = await feed(query).set('Authorization', 'Bearer not-a-token').expect(200);
    expect(withToken.headers['cache-control']).toBe('public, max-age=0, s-maxage=60');
    await feed(query).set('If-None-Match', '"stale"').expect(200);
  });

  it('keeps pending and rejected libraries out, and follows approvals, rejections, moves and deletions', async () => {
    const world = 'bbox=-180,-90,180,90';
    const totalAt = async (zoom: number) => {
      const res = await feed(`${world}&zoom=${zoom}`).expect(200);
      return (res.body.features as Feature[]).reduce(
        (sum, f) => sum + ((f.properties.count as number | undefined) ?? 1),
        0,
      );
    };
    expect(await totalAt(4)).toBe(approved().length);
    expect(await gridDrift()).toBe(0);
    const before = await feed(`${world}&zoom=4`).expect(200);
    const pending = points
      .filter((p) => p.status === 'pending')
      .slice(0, 5)
      .map((p) => p.id);
    const victims = approved()
      .slice(0, 7)
      .map((p) => p.id);
    await withClient(db.url, async (client) => {
      await client.query(`UPDATE libraries SET status = 'approved' WHERE id = ANY($1)`, [pending]);
      await client.query(`UPDATE libraries SET status = 'rejected' WHERE id = ANY($1)`, [
        victims.slice(0, 3),
      ]);
      await client.query(
        `UPDATE libraries SET location = ST_SetSRID(ST_MakePoint(-0.12, 51.5), 4326)::geography WHERE id = $1`,
        [victims[3]],
      );
      await client.query(`DELETE FROM libraries WHERE id = ANY($1)`, [victims.slice(4)]);
      // An edit that changes neither status nor place.
      await client.query(`UPDATE libraries SET name = name || ' (edited)' WHERE id = $1`, [
        pending[0],
      ]);
    });
    await reloadPoints();
    expect(await gridDrift()).toBe(0);
    for (const zoom of [0, 4, 9, 14, 17]) expect(await totalAt(zoom)).toBe(approved().length);
    const after = await feed(`${world}&zoom=4`).expect(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const london = await feed('bbox=-0.2,51.4,0,51.6&zoom=15').expect(200);
    expect(london.body.features).toHaveLength(1);
  });

  it('answers country and has_photo from the grid, following community photos and country changes', async () => {
    const world = 'bbox=-180,-90,180,90';
    const totalOf = async (query: string) => {
      const res = await feed(`${world}&${query}`).expect(200);
      return (res.body.features as Feature[]).reduce(
        (sum, f) => sum + ((f.properties.count as number | undefined) ?? 1),
        0,
      );
    };
    const target = approved().find((p) => !p.hasPhoto && p.country === 'DE');
    expect(target).toBeDefined();
    const { id } = target!;
    const withPhoto = approved().filter((p) => p.hasPhoto).length;
    const german = approved().filter((p) => p.country === 'DE').length;
    for (const zoom of [3, 12, 16]) {
      expect(await totalOf(`zoom=${zoom}&has_photo=true`)).toBe(withPhoto);
      expect(await totalOf(`zoom=${zoom}&has_photo=false&country=de`)).toBe(
        approved().filter((p) => !p.hasPhoto && p.country === 'DE').length,
      );
    }
    const photoId = await withClient(db.url, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status)
         VALUES ($1, 'photos/c.jpg', 'photos/c_thumb.jpg', 'pending') RETURNING id`,
        [id],
      );
      return rows[0].id;
    });
    // A pending community photo is no photo; an approved one is, until it is rejected or deleted.
    expect(await totalOf('zoom=9&has_photo=true')).toBe(withPhoto);
    const setPhoto = (status: string) =>
      withClient(db.url, (client) =>
        client.query('UPDATE library_photos SET status = $1 WHERE id = $2', [status, photoId]),
      );
    await setPhoto('approved');
    expect(await gridDrift()).toBe(0);
    for (const zoom of [4, 9, 14, 17]) {
      expect(await totalOf(`zoom=${zoom}&has_photo=true`)).toBe(withPhoto + 1);
      expect(await totalOf(`zoom=${zoom}&has_photo=false`)).toBe(approved().length - withPhoto - 1);
    }
    await setPhoto('rejected');
    expect(await gridDrift()).toBe(0);
    expect(await totalOf('zoom=9&has_photo=true')).toBe(withPhoto);
    await setPhoto('approved');
    await withClient(db.url, (client) =>
      client.query('DELETE FROM library_photos WHERE id = $1', [photoId]),
    );
    expect(await gridDrift()).toBe(0);
    expect(await totalOf('zoom=9&has_photo=true')).toBe(withPhoto);

    // A library that changes country moves between the grid's rows.
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET country = 'FR' WHERE id = $1`, [id]),
    );
    expect(await gridDrift()).toBe(0);
    expect(await totalOf('zoom=6&country=de')).toBe(german - 1);
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET country = 'DE' WHERE id = $1`, [id]),
    );
    expect(await gridDrift()).toBe(0);
    expect(await totalOf('zoom=6&country=de')).toBe(german);
  });

  it("reads a bounded number of libraries for a text filter: the box's or the filter's, else none", async () => {
    const repository = t.app.get(MapRepository);
    const world = [{ west: -180, south: -90, east: 180, north: 90 }];
    const kiez = approved().filter((p) => p.name.toLowerCase().includes('kiez')).length;
    const total = (rows: { n: number }[] | null) => rows?.reduce((sum, row) => sum + row.n, 0);
    expect(kiez).toBeGreaterThan(5);
    expect(approved().length).toBeGreaterThan(kiez);
    // The world holds more libraries than the bound, and more than the bound match: refused.
    expect(await repository.findFeedCells(world, 6, { search: 'kiez' }, kiez - 1)).toBeNull();
    // The filter's matches fit the bound: read first, then tested against the box.
    expect(total(await repository.findFeedCells(world, 6, { search: 'kiez' }, kiez))).toBe(kiez);
    const west = [{ west: 13.0, south: 52.3, east: 13.405, north: 52.8 }];
    const kiezWest = approved().filter(
      (p) => p.name.toLowerCase().includes('kiez') && inBox(p, [13.0, 52.3, 13.405, 52.8]),
    ).length;
    expect(total(await repository.findFeedCells(west, 12, { search: 'kiez' }, kiez))).toBe(
      kiezWest,
    );
    // The box's libraries fit the bound: the box drives.
    expect(total(await repository.findFeedCells(world, 6, { search: 'kiez' }, 100_000))).toBe(kiez);
    expect(
      total(await repository.findFeedCells(west, 12, { search: 'kiez', hasPhoto: true }, 100_000)),
    ).toBe(
      approved().filter(
        (p) =>
          p.name.toLowerCase().includes('kiez') &&
          p.hasPhoto &&
          inBox(p, [13.0, 52.3, 13.405, 52.8]),
      ).length,
    );
  });

  it('refuses a text filter only when both the box and the filter exceed MAP_TEXT_FILTER_MAX_CANDIDATES', async () => {
    const small = await createTestApp({
      databaseUrl: db.url,
      env: { RATE_LIMIT_ENABLED: 'false', MAP_TEXT_FILTER_MAX_CANDIDATES: '5' },
    });
    try {
      const get = (query: string) => request(small.http).get(`/api/v1/libraries/map?${query}`);
      const world = [-180, -90, 180, 90];
      const refused = await get(`bbox=${world.join(',')}&zoom=4&search=kiez`).expect(422);
      expect(refused.body).toEqual({
        message: 'Validation error.',
        details: {
          errors: [
            {
              loc: ['query', 'bbox'],
              msg: 'bbox holds more than 5 libraries and more than 5 match q, search, city or postal_code: zoom in or narrow the filter',
              type: 'too_many_matches',
            },
          ],
        },
      });
      // Few matches anywhere: read, then tested against the box.
      const farWest = (p: Point) => p.name.startsWith('Far West');
      const few = await get(`bbox=${world.join(',')}&zoom=4&search=far%20west`).expect(200);
      expect(checkFeed(few.body, world, 4, farWest)).toHaveLength(1);
      // A box of few libraries (Ushuaia: 3 rows, not all approved): read whatever the filter matches elsewhere
      // (`a` is in every fixture's city or name).
      const ushuaia = [-68.5, -55, -68.1, -54.6];
      expect(approved().filter((p) => inBox(p, ushuaia)).length).toBeLessThanOrEqual(5);
      const box = await get(`bbox=${ushuaia.join(',')}&zoom=10&search=a`).expect(200);
      checkFeed(box.body, ushuaia, 10, () => true);
    } finally {
      await small.close();
    }
  });

  it('answers a view of more than DENSE_FEED_FEATURES cells on a coarser grid, not below level 17 from zoom 18', async () => {
    const repository = t.app.get(MapRepository);
    // One library at the centre of each cell of a patch of 30 × 25 cells of `level` (the cells of a zoom-level + 2
    // tile), written in one statement; removed at the end.
    const patch = (level: number, lng: number, lat: number) => {
      const n = 2 ** (level + 2);
      const [x0, y0] = tileOf(lng, lat, level + 2);
      const cells: { x: number; y: number; lng: number; lat: number }[] = [];
      for (let i = 0; i < 30; i += 1) {
        for (let j = 0; j < 25; j += 1) {
          const x = x0 + i;
          const y = y0 + j;
          const lat = (Math.atan(Math.sinh(Math.PI * (1 - (2 * (y + 0.5)) / n))) * 180) / Math.PI;
          cells.push({ x, y, lng: ((x + 0.5) / n) * 360 - 180, lat });
        }
      }
      const edge = (x: number, y: number) => [
        (x / n) * 360 - 180,
        (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / n))) * 180) / Math.PI,
      ];
      // The patch's extent, a tenth of a cell inside its outer cells' edges.
      const [west, north] = edge(x0 + 0.1, y0 + 0.1);
      const [east, south] = edge(x0 + 29.9, y0 + 24.9);
      return { cells, x0, y0, bbox: [west, south, east, north] };
    };
    /** How many cells of `shift` levels coarser the patch's cells fall into. */
    const coarse = (cells: { x: number; y: number }[], shift: number) =>
      new Set(cells.map(({ x, y }) => `${x >> shift},${y >> shift}`)).size;
    const town = patch(14, 9.9, 53.6);
    const square = patch(17, 10.3, 53.6);
    await withClient(db.url, (client) =>
      client.query(
        `INSERT INTO libraries (slug, name, city, country, status, location)
         SELECT 'dense-' || i, 'Dense ' || i, p.city, 'DE', 'approved',
                ST_SetSRID(ST_MakePoint(p.lng, p.lat), 4326)::geography
         FROM unnest($1::float8[], $2::float8[], $3::text[]) WITH ORDINALITY AS p(lng, lat, city, i)`,
        [
          [...town.cells, ...square.cells].map((c) => c.lng),
          [...town.cells, ...square.cells].map((c) => c.lat),
          [...town.cells.map(() => 'Densestadt'), ...square.cells.map(() => 'Dichtdorf')],
        ],
      ),
    );
    await reloadPoints();
    try {
      expect(DENSE_FEED_FEATURES).toBeLessThan(750);
      // 750 non-empty cells at zoom 14: answered at level 13.
      const dense = await feed(`bbox=${town.bbox.join(',')}&zoom=14`).expect(200);
      const features = checkFeed(dense.body, town.bbox, 14, () => true);
      expect(features.length).toBeLessThanOrEqual(DENSE_FEED_FEATURES);
      expect(features.length).toBe(coarse(town.cells, 1));
      expect(features.every((f) => f.properties.cluster)).toBe(true);
      // The same with a text filter (the libraries grouped, box-driven), and from the filter's matches.
      const filtered = await feed(`bbox=${town.bbox.join(',')}&zoom=14&city=densestadt`).expect(
        200,
      );
      expect(filtered.text).toBe(dense.text);
      const world = [{ west: -180, south: -90, east: 180, north: 90 }];
      const fromMatches = await repository.findFeedCells(
        world,
        14,
        { city: 'densestadt' },
        750,
        true,
      );
      expect(fromMatches).toHaveLength(coarse(town.cells, 1));
      // 20 × 20 of those cells: not dense, the zoom's own cells (each library alone).
      const part = town.cells.filter((c) => c.x - town.x0 < 20 && c.y - town.y0 < 20);
      const partBox = [town.bbox[0], part.at(-1)!.lat, part.at(-1)!.lng, town.bbox[3]];
      const sparse = await feed(`bbox=${partBox.join(',')}&zoom=14`).expect(200);
      expect(checkFeed(sparse.body, partBox, 14, () => true)).toHaveLength(400);
      expect(sparse.body.features.some((f: Feature) => f.properties.cluster)).toBe(false);
      // Cells of level 17 (~45 m wide here), 750 of them: coarsened at zoom 17, not at zoom 18 (level 17 is the
      // floor there: 750 features, every library alone).
      const fine17 = await feed(`bbox=${square.bbox.join(',')}&zoom=17`).expect(200);
      expect(checkFeed(fine17.body, square.bbox, 17, () => true)).toHaveLength(
        coarse(square.cells, 1),
      );
      const fine18 = await feed(`bbox=${square.bbox.join(',')}&zoom=18`).expect(200);
      expect(checkFeed(fine18.body, square.bbox, 18, () => true)).toHaveLength(750);
    } finally {
      await withClient(db.url, (client) =>
        client.query(`DELETE FROM libraries WHERE slug LIKE 'dense-%'`),
      );
      await reloadPoints();
    }
  });

  it('routes /libraries/map before /libraries/{slug}', async () => {
    const res = await request(t.http)
      .get('/api/v1/libraries/map/')
      .query({ bbox: '0,0,1,1', zoom: 1 });
    expect(res.status).toBe(200);
  });

  describe('vector tiles', () => {
    const tile = (z: number, x: number, y: number) =>
      request(t.http)
        .get(`/api/v1/libraries/tiles/${z}/${x}/${y}.mvt`)
        .buffer(true)
        .parse((res, callback) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => callback(null, Buffer.concat(chunks)));
        });

    const decode = (body: Buffer) => new VectorTile(new PbfReader(body));

    it('holds exactly the approved libraries inside each tile, as libraries and clusters (property)', async () => {
      const targets = fc.tuple(fc.constantFrom(...approved()), fc.integer({ min: 0, max: 22 }));
      await fc.assert(
        fc.asyncProperty(targets, async ([point, z]) => {
          const [x, y] = tileOf(point.lng, point.lat, z);
          const res = await tile(z, x, y).expect(200);
          expect(res.headers['content-type']).toBe('application/vnd.mapbox-vector-tile');
          expect(res.headers['cache-control']).toBe('public, max-age=0, s-maxage=60');
          const decoded = decode(res.body as Buffer);
          const inside = approved().filter((p) => {
            const [px, py] = tileOf(p.lng, p.lat, z);
            return px === x && py === y;
          });
          let total = 0;
          const libraries = decoded.layers.libraries;
          const ids: number[] = [];
          for (let i = 0; i < (libraries?.length ?? 0); i += 1) {
            const feature = libraries.feature(i);
            expect(feature.type).toBe(1);
            expect(Object.keys(feature.properties).sort()).toEqual(['id', 'name', 'slug']);
            ids.push(feature.properties.id as number);
            const [[{ x: fx, y: fy }]] = feature.loadGeometry();
            expect(fx).toBeGreaterThanOrEqual(0);
            expect(fx).toBeLessThan(4096);
            expect(fy).toBeGreaterThanOrEqual(0);
            expect(fy).toBeLessThan(4096);
            total += 1;
          }
          expect(ids.every((id) => inside.some((p) => p.id === id))).toBe(true);
          const clusters = decoded.layers.clusters;
          for (let i = 0; i < (clusters?.length ?? 0); i += 1) {
            const count = clusters.feature(i).properties.count as number;
            expect(count).toBeGreaterThanOrEqual(2);
            total += count;
          }
          expect(total).toBe(inside.length);
        }),
        { numRuns: 80, seed: 1718 },
      );
    });

    it('draws the points where they are (y down from the north edge)', async () => {
      const taveuni = approved().find((p) => p.city === 'Taveuni')!;
      const z = 22;
      const [x, y] = tileOf(taveuni.lng, taveuni.lat, z);
      const decoded = decode((await tile(z, x, y).expect(200)).body as Buffer);
      const feature = decoded.layers.libraries.feature(0);
      const geojson = feature.toGeoJSON(x, y, z) as { geometry: { coordinates: number[] } };
      expect(geojson.geometry.coordinates[0]).toBeCloseTo(taveuni.lng, 5);
      expect(geojson.geometry.coordinates[1]).toBeCloseTo(taveuni.lat, 5);
      expect(feature.properties.id).toBe(taveuni.id);
    });

    it('encodes the same tile in Node when PostGIS cannot (the embedded database)', async () => {
      const repository = t.app.get(MapRepository);
      const layersOf = (body: Buffer) => {
        const decoded = decode(body);
        return Object.fromEntries(
          Object.entries(decoded.layers).map(([name, layer]) => [
            name,
            Array.from({ length: layer.length }, (_, i) => {
              const feature = layer.feature(i);
              return {
                type: feature.type,
                properties: feature.properties,
                geometry: feature.loadGeometry(),
              };
            }),
          ]),
        );
      };
      const berlin = approved().find((p) => p.city === 'Berlin')!;
      let compared = 0;
      for (const z of [0, 3, 8, 12, 14, 16, 21]) {
        const [x, y] = tileOf(berlin.lng, berlin.lat, z);
        const { tile: postgis } = await repository.findTileMvt(z, x, y);
        const node = encodeTile(await repository.findTileFeatures(z, x, y));
        expect(layersOf(node)).toEqual(layersOf(postgis));
        compared += Object.keys(layersOf(node)).length;
      }
      expect(compared).toBeGreaterThan(7);
    });

    it('answers 204 for an empty tile, 422 for invalid coordinates, ETag/304', async () => {
      await tile(5, 0, 0).expect(204);
      for (const path of ['23/0/0', '3/8/0', '3/0/8', '3/-1/0', 'x/0/0', '2/1.5/0']) {
        const res = await request(t.http).get(`/api/v1/libraries/tiles/${path}.mvt`).expect(422);
        expect(res.body.details.errors[0].loc[0]).toBe('path');
      }
      const first = await tile(0, 0, 0).expect(200);
      const etag = first.headers.etag;
      await request(t.http)
        .get('/api/v1/libraries/tiles/0/0/0.mvt')
        .set('If-None-Match', etag)
        .expect(304);
    });
  });

  it('counts the map tier apart from the read tier (RATE_LIMIT_MAP)', async () => {
    const limited = await createTestApp({ databaseUrl: db.url, env: { RATE_LIMIT_MAP: '3' } });
    try {
      for (let i = 0; i < 3; i += 1) {
        await request(limited.http).get('/api/v1/libraries/tiles/0/0/0.mvt').expect(200);
      }
      const res = await request(limited.http).get('/api/v1/libraries/tiles/0/0/0.mvt').expect(429);
      expect(res.body.details.retry_after).toBeGreaterThanOrEqual(1);
      await request(limited.http).get('/api/v1/libraries/map?bbox=0,0,1,1&zoom=1').expect(200);
    } finally {
      await limited.close();
    }
  });
});
