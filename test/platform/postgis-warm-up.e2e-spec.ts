import { readFileSync } from 'node:fs';
import pg from 'pg';
import { warmPostgis } from '../../src/database/postgis-warm-up.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * warmPostgis (issue 22, brief 22x): after it, a connection's first circle costs its backend no PostGIS loading and
 * no PROJ set-up. Measured as backend CPU (/proc/<pid>/schedstat: the server runs on this machine in tests).
 */
describeWithDatabaseServer('warmPostgis', () => {
  let testDb: TestDatabase;

  beforeAll(async () => {
    testDb = await createTestDatabase();
  });

  afterAll(async () => {
    await testDb?.drop();
  });

  const circle = `SELECT _ST_DWithin(ST_SetSRID(ST_MakePoint(13.4, 52.5), 4326)::geography,
    ST_SetSRID(ST_MakePoint(13.45, 52.5), 4326)::geography, 5000, true) AS within`;

  /** Backend CPU-ms of the circle's test on a new connection, after `before` ran on it. */
  async function firstCircle(before: (client: pg.Client) => Promise<void>): Promise<number> {
    const client = new pg.Client({ connectionString: testDb.url });
    await client.connect();
    try {
      const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
        .rows;
      const cpu = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      await before(client);
      const start = cpu();
      const { rows } = await client.query<{ within: boolean }>(circle);
      expect(rows[0].within).toBe(true);
      return cpu() - start;
    } finally {
      await client.end();
    }
  }

  it('leaves a new connection’s first circle without PostGIS’s and PROJ’s set-up', async () => {
    const cold: number[] = [];
    const warmed: number[] = [];
    for (let i = 0; i < 3; i++) {
      cold.push(await firstCircle(async () => undefined));
      warmed.push(await firstCircle(warmPostgis));
    }
    // Cold: 20–35 CPU-ms on this machine; warmed: well under 2.
    expect(Math.min(...cold)).toBeGreaterThan(5);
    expect(Math.max(...warmed)).toBeLessThan(Math.min(...cold) / 3);
  });
});
