import type pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { TestApp } from '../support/app.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { insertSpreadLibraries } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

/** The app's node-postgres pool (TypeORM's driver keeps it as `master`). */
function appPool(t: TestApp): pg.Pool {
  return (t.app.get(DataSource).driver as unknown as { master: pg.Pool }).master;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Idle pool connections (DATABASE_POOL_IDLE_SECONDS): each connection holds the prepared statements of the lists
 * and the generic plans PostgreSQL settled on, so a quiet spell must not close it. node-postgres' own default
 * (10 s) did: the next requests were parsed and planned again on a new connection.
 */
describeWithDatabaseServer('database pool: idle connections', () => {
  const { db, startApp } = useTestSuite({ app: false });

  beforeAll(() =>
    insertSpreadLibraries(db.url, 30, { prefix: 'pool', west: 13, south: 52, span: 1 }),
  );

  const list = async (t: TestApp) => {
    const response = await request(t.http).get('/api/v1/libraries/?country=DE&page=2&page_size=5');
    expect(response.status).toBe(200);
  };

  it('by default, a connection idle for longer than 10 s keeps its prepared statements', async () => {
    const t = await startApp({ env: { RATE_LIMIT_ENABLED: 'false', DATABASE_POOL_SIZE: '1' } });
    await list(t);
    const before = await appPool(t).query<{ pid: number; prepared: number }>(
      'SELECT pg_backend_pid() AS pid, (SELECT count(*)::int FROM pg_prepared_statements) AS prepared',
    );
    expect(before.rows[0].prepared).toBeGreaterThan(0);

    await sleep(11_000);

    // The only connection of the pool: the same server session, its statements still prepared.
    const after = await appPool(t).query<{ pid: number; prepared: number }>(
      'SELECT pg_backend_pid() AS pid, (SELECT count(*)::int FROM pg_prepared_statements) AS prepared',
    );
    expect(after.rows[0]).toEqual(before.rows[0]);
    await list(t);
    await t.close();
  }, 30_000);

  it('DATABASE_POOL_IDLE_SECONDS closes connections idle that long', async () => {
    const t = await startApp({
      env: { RATE_LIMIT_ENABLED: 'false', DATABASE_POOL_IDLE_SECONDS: '1' },
    });
    await Promise.all([list(t), list(t), list(t)]);
    expect(appPool(t).totalCount).toBeGreaterThan(0);
    const deadline = Date.now() + 5_000;
    while (appPool(t).totalCount > 0 && Date.now() < deadline) await sleep(100);
    expect(appPool(t).totalCount).toBe(0);
    // A new connection is opened on demand.
    await list(t);
    await t.close();
  }, 30_000);
});
