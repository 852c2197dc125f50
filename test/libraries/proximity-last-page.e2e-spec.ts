/**
 * A circle's page past the end is the last page, read again after the count (issue 22, brief 22e). It asks for no
 * more rows than the circle's total leaves: the nearest-first walk reads the box of unit vectors around the circle,
 * whose corners hold libraries outside it, and asked for a full page it read and rejected every one of them before
 * giving up (at 1M, a 25 km circle of 25 libraries near Brussels: 2,569 rows, 20–50 ms). The answers are the pages a
 * plain reading gives.
 */
import request from 'supertest';
import { PreparedReader } from '../../src/database/prepared-reader.js';
import { withClient } from '../support/database.js';
import { useTestSuite } from '../support/suite.js';

/** 25 libraries within 5 km of the centre, and 300 in the corners of the box around the 10 km circle. */
const CENTRE = { lat: 50.5, lng: 4.1 };

describe('proximity: the last page read again', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    await withClient(db.url, async (client) => {
      await client.query(
        `INSERT INTO libraries (slug, name, address, city, country, location, status, created_at)
         SELECT 'near-' || i, 'Near ' || i, 'Street 1', 'Town', 'BE',
                ST_Project(ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, 200 * i, radians(i * 37)), 'approved',
                timestamptz '2025-01-01' + i * interval '1 hour'
         FROM generate_series(1, 25) AS i`,
        [CENTRE.lng, CENTRE.lat],
      );
      // Just outside the circle, inside its box: towards the corners (bearings 45°, 135° …), at 10.5–13 km.
      await client.query(
        `INSERT INTO libraries (slug, name, address, city, country, location, status, created_at)
         SELECT 'corner-' || i, 'Corner ' || i, 'Street 2', 'Town', 'BE',
                ST_Project(ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, 10500 + 8 * i,
                           radians(45 + 90 * (i % 4) + (i % 7) - 3)), 'approved',
                timestamptz '2025-02-01' + i * interval '1 hour'
         FROM generate_series(1, 300) AS i`,
        [CENTRE.lng, CENTRE.lat],
      );
      await client.query('VACUUM ANALYZE libraries');
    });
  });

  it('reads the last page with the rows the total leaves, and answers it as page 2', async () => {
    const circle = `lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=10`;
    const last = await request(t.http).get(`/api/v1/libraries/?${circle}&page=2`).expect(200);
    expect(last.body.pagination).toMatchObject({ page: 2, total: 25, total_pages: 2 });
    expect(last.body.items).toHaveLength(5);

    const reader = t.app.get(PreparedReader);
    reader.startCapture(10);
    const past = await request(t.http).get(`/api/v1/libraries/?${circle}&page=9`).expect(200);
    const statements = reader.takeCapture();
    expect(past.body).toEqual(last.body);
    // The count and page (nothing past the end), then the last page alone: LIMIT 5 OFFSET 20, its last parameters.
    expect(statements).toHaveLength(2);
    expect(statements[1].params.slice(-2)).toEqual(['5', '20']);
  });

  it('answers a page inside the circle as before', async () => {
    const circle = `lat=${CENTRE.lat}&lng=${CENTRE.lng}&radius_km=10&page_size=10`;
    const pages = await Promise.all(
      [1, 2, 3].map((page) => request(t.http).get(`/api/v1/libraries/?${circle}&page=${page}`)),
    );
    const slugs = pages.flatMap((page) =>
      page.body.items.map((item: { slug: string }) => item.slug),
    );
    expect(slugs).toEqual(Array.from({ length: 25 }, (_, i) => `near-${i + 1}`));
  });
});
