/**
 * Issue 14 on a PostgreSQL cluster of this file's own (test/support/own-postgres.ts; never the shared server):
 *
 * - a hung database (every server process SIGSTOPped) while requests are in flight: each answers the 503 envelope
 *   with Retry-After after the client-side query timeout or the pool wait, and the connections whose queries hung
 *   are discarded, not returned to the pool;
 * - real restarts (`pg_ctl restart -m fast` and `-m immediate`) under concurrent submitters.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { OrphanMediaSweep } from '../../src/common/media/orphan-media-sweep.js';
import { registerUser, type RegisteredUser } from '../support/auth.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { withClient } from '../support/database.js';
import { defaultPhoto, submissionFields, submitLibrary } from '../support/libraries.js';
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

describeWithOwnPostgres(
  'a hung and a restarting database, on a cluster of its own (issue 14)',
  () => {
    let cluster: OwnPostgresCluster;
    let t: TestApp;
    let user: RegisteredUser;
    const logs: string[] = [];
    const figures: Record<string, unknown> = {};

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

    beforeEach(() => {
      logs.splice(0);
    });

    afterAll(async () => {
      process.stdout.write(`database restart figures: ${JSON.stringify(figures)}\n`);
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

    it('10 real restarts (fast and immediate) under 6 submitters retrying with their Idempotency-Key: 201 or 503 only, no duplicate, every row has its files, no orphan after the sweep', async () => {
      const submitters: RegisteredUser[] = [];
      for (let i = 0; i < 6; i += 1) submitters.push(await registerUser(t.http));
      const statuses: Record<number, number> = {};
      const unexpected: { status: number; body: unknown }[] = [];
      const intended: string[] = [];
      let retried = 0;
      let restartsDone = false;
      let created = 0;

      /** One intended submission: repeated with its key until it answers 201 (a 503 means "try again later"). */
      async function submitUntilCreated(submitter: RegisteredUser, name: string): Promise<void> {
        const key = randomUUID();
        const fields = submissionFields({ name });
        for (let attempt = 0; attempt < 200; attempt += 1) {
          const res = await request(t.http)
            .post('/api/v1/libraries/')
            .set('Authorization', `Bearer ${submitter.access}`)
            .set('Idempotency-Key', key)
            .field(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])))
            .attach('photo', photo, { filename: 'photo.jpg', contentType: 'image/jpeg' });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 201) {
            created += 1;
            return;
          }
          if (res.status !== 503 || res.headers['retry-after'] !== '5') {
            unexpected.push({ status: res.status, body: res.body as unknown });
            return;
          }
          expect(res.body).toEqual(UNAVAILABLE);
          retried += 1;
          // The client's back-off (Retry-After scaled down for the test).
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        unexpected.push({ status: 0, body: `${name}: no 201 after 200 attempts` });
      }

      const photo = await defaultPhoto();
      const started = Date.now();
      const restarter = (async () => {
        for (let i = 0; i < 10; i += 1) {
          // Let submissions make progress between restarts, so each restart hits work in flight.
          const target = created + 3;
          while (created < target) await new Promise((resolve) => setTimeout(resolve, 20));
          await cluster.restart(i % 2 === 0 ? 'fast' : 'immediate');
        }
        restartsDone = true;
      })();
      await Promise.all([
        restarter,
        ...submitters.map(async (submitter, index) => {
          for (let n = 0; !restartsDone; n += 1) {
            const name = `Restart ${index}-${n}`;
            intended.push(name);
            await submitUntilCreated(submitter, name);
          }
        }),
      ]);
      figures.restarts = {
        seconds: Math.round((Date.now() - started) / 1000),
        intended: intended.length,
        statuses,
        retried,
        // 503s whose COMMIT may have gone through: their retries are where the key prevents a duplicate.
        commitOutcomeUnknown: logs.filter((line) => line.includes('outcome unknown')).length,
      };

      if (unexpected.length)
        process.stdout.write(
          `errors logged:\n${logs
            .filter((line) => line.includes('"level":50'))
            .slice(0, 5)
            .join('\n')}\n`,
        );
      expect(unexpected).toEqual([]);
      expect(Object.keys(statuses).sort()).toEqual(
        Object.keys(statuses).length > 1 ? ['201', '503'] : ['201'],
      );
      expect(logs.filter((line) => line.includes('"level":50'))).toEqual([]);
      // Exactly one row per intended submission: no retry created a duplicate, none was lost.
      const rows = await withClient(cluster.url, async (client) => {
        const { rows: found } = await client.query<{ name: string; n: number }>(
          `SELECT name, count(*)::int AS n FROM libraries WHERE name LIKE 'Restart %' GROUP BY name`,
        );
        return Object.fromEntries(found.map((row) => [row.name, row.n]));
      });
      expect(rows).toEqual(Object.fromEntries(intended.map((name) => [name, 1])));
      // Every row has its files; once the sweep ran, no file is left that no row references.
      expect((await auditMedia(cluster.url, t.config.mediaRoot)).missing).toEqual([]);
      await t.app.get(OrphanMediaSweep).sweep(0);
      expect(await auditMedia(cluster.url, t.config.mediaRoot)).toEqual({
        missing: [],
        unreferenced: [],
      });
    });
  },
);
