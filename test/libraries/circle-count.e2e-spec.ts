/**
 * A radius list's count from the map's grid (circleCells: the cells inside the circle summed from library_map_cells,
 * the libraries of the edge cells tested one by one) equals the plain count of the libraries within the radius, with
 * `country` and `has_photo`, before and after writes that move libraries between cells (moves, rejections,
 * deletions, photo changes, community photos). The API counts the circles with GRID_COUNT_FROM libraries or more
 * in their coarse cells through the grid (a second statement), the others library by library: both occur here.
 */
import request from 'supertest';
import { circleCells, circleCover } from '../../src/libraries/circle-cells.js';
import {
  circleCountQuery,
  GRID_COUNT_FROM,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import type { TestApp } from '../support/app.js';
import { withClient, type TestDatabase } from '../support/database.js';
import { useTestSuite } from '../support/suite.js';

const CENTRE = { lat: 52.52, lng: 13.405 };

/** Circles around and beside the cluster, with the list filters that the grid's facets answer. */
const CIRCLES: {
  lat: number;
  lng: number;
  radiusKm: number;
  country?: string;
  hasPhoto?: boolean;
}[] = [
  { ...CENTRE, radiusKm: 1 },
  { ...CENTRE, radiusKm: 2 },
  { ...CENTRE, radiusKm: 5 },
  { lat: 52.53, lng: 13.37, radiusKm: 3 },
  { lat: 52.49, lng: 13.44, radiusKm: 4, country: 'DE' },
  { lat: 52.51, lng: 13.41, radiusKm: 2.5, hasPhoto: true },
  { lat: 52.55, lng: 13.39, radiusKm: 6, hasPhoto: false, country: 'PL' },
  { lat: 52.545, lng: 13.45, radiusKm: 1.5 },
  { ...CENTRE, radiusKm: 5, country: 'DE' },
  { lat: 52.5, lng: 13.42, radiusKm: 7 },
];

describe('circle count from the map grid', () => {
  let db: TestDatabase;
  let t: TestApp;

  useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ db, t } = s));

  const sql = (text: string, params: unknown[] = []) =>
    withClient(db.url, async (client) => (await client.query(text, params)).rows);

  beforeAll(async () => {
    // 20,000 libraries spread over ~6 km around the centre (deterministic), some pending, two countries, half with
    // a photo: enough for the grid to count the larger circles in the API (GRID_COUNT_FROM).
    await sql(
      `INSERT INTO libraries (slug, name, address, city, country, location, status, photo_key, thumbnail_key)
       SELECT 'circle-' || i, 'Shelf ' || i, 'Street 1', 'Berlin', CASE WHEN i % 7 = 0 THEN 'PL' ELSE 'DE' END,
              ST_Project(ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography,
                         6000 * sqrt(mod(i * 0.6180339887, 1)), radians(mod(i * 137.508, 360))),
              CASE WHEN i % 11 = 0 THEN 'pending' ELSE 'approved' END,
              CASE WHEN i % 2 = 0 THEN 'p' || i || '.jpg' END, CASE WHEN i % 2 = 0 THEN 't' || i || '.jpg' END
       FROM generate_series(1, 20000) AS i`,
      [CENTRE.lng, CENTRE.lat],
    );
  });

  /** The libraries of the coarse cells around a circle (with its facets): what decides the API's way to count. */
  async function coverBound(circle: (typeof CIRCLES)[number]): Promise<number> {
    const { cover } = circleCover(circle.lat, circle.lng, circle.radiusKm * 1000)!;
    const [{ n }] = (await sql(
      `SELECT coalesce(sum(c.count), 0)::int AS n FROM library_map_cells c
       JOIN unnest($1::int[], $2::int[], $3::int[], $4::int[]) AS r(level, cy, x0, x1)
         ON c.level = r.level AND c.cy = r.cy AND c.cx BETWEEN r.x0 AND r.x1
       WHERE ($5::text IS NULL OR c.country = $5) AND ($6::boolean IS NULL OR c.has_photo = $6)`,
      [
        cover.map((r) => r.level),
        cover.map((r) => r.cy),
        cover.map((r) => r.x0),
        cover.map((r) => r.x1),
        circle.country ?? null,
        circle.hasPhoto ?? null,
      ],
    )) as { n: number }[];
    return n;
  }

  it('counts some circles in the API through the grid and others library by library', async () => {
    const bounds = await Promise.all(CIRCLES.map(coverBound));
    expect(bounds.filter((n) => n >= GRID_COUNT_FROM).length).toBeGreaterThanOrEqual(2);
    expect(bounds.filter((n) => n < GRID_COUNT_FROM).length).toBeGreaterThanOrEqual(2);
  });

  async function expectExact(): Promise<void> {
    const withPhoto = `(l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
                        WHERE p.library_id = l.id AND p.status = 'approved'))`;
    for (const circle of CIRCLES) {
      const search: LibrarySearch = {
        near: { lat: circle.lat, lng: circle.lng, radiusMeters: circle.radiusKm * 1000 },
        country: circle.country,
        hasPhoto: circle.hasPhoto,
      };
      // The grid answers these circles when forced (GRID_COUNT_FROM 0); the API's choice is checked below.
      const grid = circleCountQuery(search, 0);
      expect(grid).not.toBeNull();
      const [{ n }] = (await sql(
        `SELECT count(*)::int AS n FROM libraries l WHERE l.status = 'approved'
           AND ST_DWithin(l.location, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3)
           ${circle.country ? `AND l.country = '${circle.country}'` : ''}
           ${circle.hasPhoto === undefined ? '' : `AND ${circle.hasPhoto ? '' : 'NOT'} ${withPhoto}`}`,
        [circle.lng, circle.lat, circle.radiusKm * 1000],
      )) as { n: number }[];
      const filters = [
        circle.country ? `&country=${circle.country}` : '',
        circle.hasPhoto === undefined ? '' : `&has_photo=${circle.hasPhoto}`,
      ].join('');
      const res = await request(t.http)
        .get(
          `/api/v1/libraries/?lat=${circle.lat}&lng=${circle.lng}&radius_km=${circle.radiusKm}${filters}`,
        )
        .expect(200);
      expect({ circle, total: res.body.pagination.total }).toEqual({ circle, total: n });
      const [{ n: fromGrid }] = (await sql(grid!.text, grid!.params)) as { n: number }[];
      expect({ circle, fromGrid }).toEqual({ circle, fromGrid: n });
      expect(n).toBeGreaterThan(0);
    }
  }

  it('counts exactly what the radius holds', async () => {
    await expectExact();
  });

  it('stays exact after moves, approvals, rejections, photo changes and deletions', async () => {
    await sql(
      `UPDATE libraries SET location = ST_Project(location, 700, radians(45)) WHERE slug LIKE 'circle-1%'`,
    );
    await sql(
      `UPDATE libraries SET status = 'approved' WHERE slug LIKE 'circle-2%' AND status = 'pending'`,
    );
    await sql(`UPDATE libraries SET status = 'rejected' WHERE slug LIKE 'circle-3%'`);
    await sql(
      `UPDATE libraries SET photo_key = NULL, thumbnail_key = NULL WHERE slug LIKE 'circle-4%'`,
    );
    await sql(`DELETE FROM libraries WHERE slug LIKE 'circle-5%'`);
    await sql(
      `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status)
       SELECT id, 'cp.jpg', 'cp_t.jpg', 'approved' FROM libraries
       WHERE slug LIKE 'circle-6%' AND photo_key IS NULL AND status = 'approved'`,
    );
    await expectExact();
  });

  it('counts libraries on the borders of the edge cells once', async () => {
    // On a border (and a hair either side) of each edge run of three circles: the grid's cell functions decide
    // there whether a library is counted with its run or summed with the neighbouring cell (the run's core box
    // answers only for libraries well inside it).
    const points: [number, number][] = [];
    for (const circle of CIRCLES.slice(0, 3)) {
      const { edge } = circleCells(circle.lat, circle.lng, circle.radiusKm * 1000)!;
      for (const run of edge) {
        const [west, east, south, north] = [
          run.west + 1e-9,
          run.east - 1e-9,
          run.south + 1e-9,
          run.north - 1e-9,
        ];
        const [midLng, midLat] = [(west + east) / 2, (south + north) / 2];
        for (const hair of [0, 1e-11, -1e-11]) {
          points.push([west + hair, midLat], [east + hair, midLat]);
          points.push([midLng, north + hair], [midLng, south + hair], [west + hair, north + hair]);
        }
      }
    }
    await sql(
      `INSERT INTO libraries (slug, name, address, city, country, location, status)
       SELECT 'border-' || i, 'Border ' || i, 'Street 1', 'Berlin', 'DE',
              ST_SetSRID(ST_MakePoint(p.lng, p.lat), 4326)::geography, 'approved'
       FROM unnest($1::float8[], $2::float8[]) WITH ORDINALITY AS p(lng, lat, i)`,
      [points.map(([lng]) => lng), points.map(([, lat]) => lat)],
    );
    await expectExact();
  });
});
