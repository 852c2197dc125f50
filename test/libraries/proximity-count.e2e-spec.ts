/**
 * A radius list counts through libraries_approved_point_idx with a longitude/latitude box around the circle
 * (nearBox) and the exact spheroid test. These tests check that the box never drops a library the exact test keeps:
 * libraries placed just inside and just outside the circle at every bearing, at several latitudes, where the box
 * is unusable (pole, antimeridian), and with the largest radius the API accepts. The pages come nearest first, as
 * `<->` on geography orders them (the sphere's distance), read from libraries_approved_unit_vector_idx, also from
 * points far from every library.
 */
import request from 'supertest';
import { nearBox, sphereBounds } from '../../src/libraries/near-box.js';
import { withClient } from '../support/database.js';
import { useTestSuite } from '../support/suite.js';

interface Centre {
  name: string;
  lat: number;
  lng: number;
  radiusKm: number;
}

const CENTRES: Centre[] = [
  { name: 'berlin', lat: 52.52, lng: 13.405, radiusKm: 5 },
  { name: 'equator', lat: 0.2, lng: -78.5, radiusKm: 25 },
  { name: 'sydney', lat: -33.87, lng: 151.21, radiusKm: 1 },
  { name: 'tromso', lat: 69.65, lng: 18.96, radiusKm: 100 },
  { name: 'svalbard', lat: 88.6, lng: 15.6, radiusKm: 100 },
  { name: 'fiji', lat: -16.5, lng: 179.98, radiusKm: 10 },
];
/** Bearings per centre; each gets one library at 0.999 r and one at 1.001 r, plus one well inside. */
const BEARINGS = 72;

describe('proximity count', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      for (const centre of CENTRES) {
        await client.query(
          `INSERT INTO libraries (slug, name, address, city, country, location, status)
           SELECT $1 || '-' || b || '-' || k, 'Shelf ' || b || '-' || k, 'Street 1', 'Town', 'DE',
                  ST_Project(ST_SetSRID(ST_MakePoint($2, $3), 4326)::geography,
                             $4 * (ARRAY[0.999, 1.001, 0.5])[k], radians(b * 360.0 / $5 + 0.5)),
                  'approved'
           FROM generate_series(0, $5 - 1) AS b, generate_series(1, 3) AS k`,
          [centre.name, centre.lng, centre.lat, centre.radiusKm * 1000, BEARINGS],
        );
      }
      await client.query('VACUUM ANALYZE libraries');
    });
  });

  it('the geodesic stays within sphereBounds of the sphere’s distance around each centre (PostGIS’s own distances)', async () => {
    // withinRadius and circleCells decide by the sphere alone outside the band these bounds leave: a point of the
    // circle's surroundings whose geodesic/sphere ratio fell outside them would be counted wrongly.
    for (const centre of CENTRES) {
      const r = centre.radiusKm * 1000;
      const { shortest, longest } = sphereBounds(centre.lat, centre.lng, r);
      expect(shortest).toBeLessThan(longest);
      const [ratios] = await withClient(db.url, async (client) => {
        const { rows } = await client.query<{ low: number; high: number }>(
          `SELECT min(ST_Distance(c, p, true) / ST_Distance(c, p, false)) AS low,
                  max(ST_Distance(c, p, true) / ST_Distance(c, p, false)) AS high
           FROM (SELECT ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography AS c) c,
                LATERAL (SELECT ST_Project(c, $3::float8 * f, radians(a / 4.0)) AS p
                  FROM generate_series(0, 1439) AS a, unnest(ARRAY[0.3, 0.9, 0.99, 1.0, 1.006]) AS f) p`,
          [centre.lng, centre.lat, r],
        );
        return rows;
      });
      expect({
        centre: centre.name,
        inside: ratios.low >= shortest && ratios.high <= longest,
      }).toEqual({
        centre: centre.name,
        inside: true,
      });
    }
  });

  it('the box holds every point at exactly the radius, at every bearing', async () => {
    for (const centre of CENTRES) {
      const box = nearBox(centre.lat, centre.lng, centre.radiusKm * 1000);
      if (!box) continue;
      const outside = await withClient(db.url, async (client) => {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM (
             SELECT ST_Project(ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3::float8, radians(a / 10.0))::geometry AS p
             FROM generate_series(0, 3599) AS a) s
           WHERE NOT (ST_X(p) BETWEEN $4 AND $6 AND ST_Y(p) BETWEEN $5 AND $7)`,
          [
            centre.lng,
            centre.lat,
            centre.radiusKm * 1000,
            box.minLng,
            box.minLat,
            box.maxLng,
            box.maxLat,
          ],
        );
        return rows[0].n;
      });
      expect({ centre: centre.name, outside }).toEqual({ centre: centre.name, outside: 0 });
    }
  });

  it('counts exactly what ST_DWithin keeps, at every latitude, near a pole and across the antimeridian', async () => {
    for (const centre of CENTRES) {
      const expected = await withClient(db.url, async (client) => {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM libraries
           WHERE status = 'approved'
             AND ST_DWithin(location, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3)`,
          [centre.lng, centre.lat, centre.radiusKm * 1000],
        );
        return rows[0].n;
      });
      // At each bearing the libraries at 0.5 r and 0.999 r are within the circle, the one at 1.001 r is not.
      expect(expected).toBe(2 * BEARINGS);
      // The pages hold exactly the counted libraries: the page's condition and the count's agree.
      const slugs = new Set<string>();
      let total = -1;
      for (let page = 1; page <= 4; page += 1) {
        const res = await request(t.http)
          .get('/api/v1/libraries/')
          .query({
            lat: centre.lat,
            lng: centre.lng,
            radius_km: centre.radiusKm,
            page_size: 50,
            page,
          })
          .expect(200);
        total = res.body.pagination.total as number;
        for (const item of res.body.items as { slug: string }[]) slugs.add(item.slug);
        if (!res.body.pagination.has_next) break;
      }
      expect({ centre: centre.name, total, listed: slugs.size }).toEqual({
        centre: centre.name,
        total: expected,
        listed: expected,
      });
      expect([...slugs].every((slug) => /-[13]$/.test(slug))).toBe(true);
    }
  });

  it('pages nearest first exactly as the sphere distance orders, near and far from every library', async () => {
    const points = [
      { lat: 52.52, lng: 13.405 },
      { lat: 52.6, lng: 13.3, radius_km: 100 },
      { lat: -40, lng: -120 },
      { lat: 10, lng: 100 },
      { lat: 89.9, lng: -30 },
      { lat: -16.4, lng: -179.9, radius_km: 50 },
    ];
    for (const point of points) {
      const slugs: string[] = [];
      for (let page = 1; page <= 2; page += 1) {
        const res = await request(t.http)
          .get('/api/v1/libraries/')
          .query({ ...point, page_size: 50, page })
          .expect(200);
        slugs.push(...(res.body.items as { slug: string }[]).map((item) => item.slug));
      }
      const distances = await withClient(db.url, async (client) => {
        const { rows } = await client.query<{ slug: string; d: number }>(
          `SELECT slug, location <-> ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography AS d
           FROM libraries WHERE status = 'approved'`,
          [point.lng, point.lat],
        );
        return new Map(rows.map((row) => [row.slug, row.d]));
      });
      const listed = slugs.map((slug) => distances.get(slug)!);
      const within = point.radius_km
        ? [...distances.values()].filter((d) => d <= point.radius_km * 1000 * 0.99).length
        : distances.size;
      expect({ point, listed: slugs.length }).toEqual({ point, listed: Math.min(100, within) });
      // Nearest first (to a millimetre: equal distances may come in either order)…
      for (let i = 1; i < listed.length; i += 1)
        expect(listed[i]).toBeGreaterThanOrEqual(listed[i - 1] - 1e-3);
      // …and none left out is nearer than the last listed.
      const taken = new Set(slugs);
      const nearestLeft = Math.min(
        ...[...distances].filter(([slug]) => !taken.has(slug)).map(([, d]) => d),
      );
      expect(nearestLeft).toBeGreaterThanOrEqual(listed[listed.length - 1] - 1e-3);
    }
  });
});
