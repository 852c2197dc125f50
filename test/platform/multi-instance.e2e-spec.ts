/**
 * Several API instances behind a load balancer behave as one (issue 19): two BUILT app processes
 * (`node dist/src/main.js`, each with a data directory of its own) on one PostgreSQL database, one Redis and one
 * S3-compatible server (s3rver on loopback; the app uses the real AWS SDK), with requests spread over both.
 * The database starts empty: both instances start at the same time and migrate it once, under the advisory lock.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { MIGRATIONS } from '../../migrations/index.js';
import { describeWithDatabaseServer, describeWithRedis, TEST_JWT_SECRET } from '../support/app.js';
import { bearer, makeStaff, registerUser, type RegisteredUser } from '../support/auth.js';
import { postPhoto } from '../support/community.js';
import { csrfOf } from '../support/console.js';
import { queryRows, withClient } from '../support/database.js';
import { aiJson, FakeAiServer } from '../support/fake-ai.js';
import { FakeMapServer } from '../support/fake-map-server.js';
import { createLibrary, fetchMedia, jpeg } from '../support/libraries.js';
import { cleanEnv, exitOf, freePort, startNode, waitForStatus } from '../support/processes.js';
import { startS3Server, type TestS3Server } from '../support/s3-server.js';
import {
  checkPasses,
  moderate,
  nextPosition,
  writeEnv,
  MAP_TOKEN,
} from '../map-contribution/helpers.js';

interface Instance {
  name: string;
  url: string;
  dataDir: string;
  process: { child: ChildProcess; output: () => string };
}

const LOGIN_LIMIT = 6;

describeWithRedis('two API instances behind a load balancer', () => {
  describeWithDatabaseServer('(PostgreSQL server, Redis, S3)', () => {
    let adminUrl: string;
    let dbName: string;
    let dbUrl: string;
    let s3: TestS3Server;
    let bucket: string;
    const map = new FakeMapServer({ token: MAP_TOKEN });
    let ai: FakeAiServer;
    let a: Instance;
    let b: Instance;
    let staff: RegisteredUser;
    let owner: RegisteredUser;
    /** Round-robin over the two instances, as a load balancer would. */
    let turn = 0;
    const next = () => ((turn += 1) % 2 === 0 ? a : b);

    async function start(name: string, env: Record<string, string>): Promise<Instance> {
      const port = await freePort();
      const dataDir = mkdtempSync(join(tmpdir(), `bookcase-instance-${name}-`));
      const process = startNode(
        'dist/src/main.js',
        cleanEnv({ ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir }),
      );
      return { name, url: `http://127.0.0.1:${port}`, dataDir, process };
    }

    async function ready(instance: Instance): Promise<void> {
      await waitForStatus(`${instance.url}/ready`, 200, 240_000).catch((error: Error) => {
        throw new Error(`${instance.name}: ${error.message}\n${instance.process.output()}`);
      });
    }

    const sql = <T>(text: string, params: unknown[] = []) => queryRows<T>(dbUrl, text, params);

    beforeAll(async () => {
      adminUrl = process.env.TEST_DB_ADMIN_URL!;
      dbName = `bookcase_t_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
      await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${dbName}`));
      const url = new URL(adminUrl);
      url.pathname = `/${dbName}`;
      dbUrl = url.toString();
      s3 = await startS3Server();
      bucket = await s3.createBucket();
      await map.start();
      ai = await FakeAiServer.start();
      const env: Record<string, string> = {
        ...writeEnv(map),
        DATABASE_URL: dbUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        LOG_LEVEL: 'warn',
        REDIS_URL: process.env.TEST_REDIS_URL!,
        REDIS_KEY_PREFIX: `mi${randomBytes(5).toString('hex')}:`,
        RATE_LIMIT_ENABLED: 'true',
        RATE_LIMIT_LOGIN: String(LOGIN_LIMIT),
        RATE_LIMIT_REGISTER: '50',
        RATE_LIMIT_WRITE: '100',
        RATE_LIMIT_READ: '1000',
        AI_API_BASE_URL: ai.baseUrl,
        AI_API_KEY: 'test-key',
        AI_MODEL: 'test-model',
        EXPORT_INTERVAL: 'off',
        // Behind the load balancer: the client address comes from X-Forwarded-For.
        TRUST_PROXY: '127.0.0.1',
        ...s3.env(bucket),
      };
      // Both at once, on an empty database: one migrates, the other waits for the lock.
      [a, b] = await Promise.all([start('A', env), start('B', env)]);
      await Promise.all([ready(a), ready(b)]);
      staff = await registerUser(a.url);
      await makeStaff(dbUrl, staff.id);
      owner = await registerUser(b.url);
    });

    afterAll(async () => {
      for (const instance of [a, b]) {
        if (!instance) continue;
        if (instance.process.child.exitCode === null) instance.process.child.kill('SIGTERM');
        await exitOf(instance.process.child, 30_000).catch(() =>
          instance.process.child.kill('SIGKILL'),
        );
        rmSync(instance.dataDir, { recursive: true, force: true });
      }
      map.release();
      await map.stop();
      await ai?.close();
      await s3?.close();
      if (dbName)
        await withClient(adminUrl, (client) =>
          client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
        );
    });

    it('migrated the empty database exactly once although both started together', async () => {
      const rows = await sql<{ name: string; n: number }>(
        'SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name',
      );
      expect(rows.length).toBe(MIGRATIONS.length);
      expect(rows.every((row) => row.n === 1)).toBe(true);
    });

    it('a photo uploaded through A is served by B; a photo rejected through B is gone from A', async () => {
      const photo = await jpeg(320, 240);
      const created = await createLibrary(a.url, owner.access, nextPosition(), { data: photo });
      const url = created.photo_url as string;
      const fromA = await fetchMedia(a.url, url);
      const fromB = await fetchMedia(b.url, url);
      expect(fromB.equals(fromA)).toBe(true);
      // Neither instance keeps media on its own disk.
      for (const instance of [a, b]) {
        const entries = readdirSync(instance.dataDir, { recursive: true }) as string[];
        expect(entries.filter((entry) => entry.endsWith('.jpg'))).toEqual([]);
      }

      await moderate(b.url, staff, created.slug, { status: 'approved' });
      const posted = await postPhoto(a.url, owner.access, created.slug, { caption: 'side view' });
      expect(posted.status).toBe(201);
      const [row] = await sql<{ photo_key: string }>(
        'SELECT photo_key FROM library_photos WHERE id = $1',
        [posted.body.id],
      );
      await request(b.url).get(`/media/${row.photo_key}`).expect(200);
      await request(b.url)
        .patch(`/api/v1/libraries/moderation/photos/${posted.body.id}`)
        .set('Authorization', bearer(staff.access))
        .send({ status: 'rejected' })
        .expect(200);
      await request(a.url).get(`/media/${row.photo_key}`).expect(404);
      await request(b.url).get(`/media/${row.photo_key}`).expect(404);
    });

    it('shares the statistics cache: computed once on A, B serves the same figures without computing', async () => {
      const first = await request(a.url).get('/api/v1/statistics/').expect(200);
      // A library approved behind the cache's back: an instance computing afresh would count it.
      await createLibrary(b.url, owner.access, nextPosition()).then((library) =>
        sql('UPDATE libraries SET status = $1 WHERE id = $2', ['approved', library.id]),
      );
      const second = await request(b.url).get('/api/v1/statistics/').expect(200);
      expect(second.body).toEqual(first.body);
      const fresh = await sql<{ n: number }>(
        "SELECT count(*)::int AS n FROM libraries WHERE status = 'approved'",
      );
      expect(fresh[0].n).toBe(first.body.total_approved + 1);
    });

    it('processes an enrichment job exactly once although both instances poll the queue', async () => {
      ai.reply(aiJson('Roter Bücherschrank', 'A red wooden cabinet with two shelves of books.'));
      const before = ai.requests.length;
      const created = await createLibrary(next().url, owner.access, {
        ...nextPosition(),
        name: undefined,
        description: undefined,
      });
      let job: { status: string; attempts: number } | undefined;
      for (let i = 0; i < 240 && job?.status !== 'done'; i += 1) {
        [job] = await sql<{ status: string; attempts: number }>(
          'SELECT status, attempts FROM enrichment_jobs WHERE library_id = $1',
          [created.id],
        );
        if (job?.status !== 'done') await sql('SELECT pg_sleep(0.25)');
      }
      expect(job).toEqual({ status: 'done', attempts: 1 });
      expect(ai.requests.length - before).toBe(1);
    });

    it('a console session signed in on A works on B', async () => {
      const form = await request(a.url).get('/admin/login').expect(200);
      const formCookies = ([] as string[]).concat(form.headers['set-cookie'] ?? []);
      const signIn = await request(a.url)
        .post('/admin/login')
        .set('Cookie', formCookies.map((cookie) => cookie.split(';')[0]).join('; '))
        .type('form')
        .send({
          _csrf: csrfOf(form.text),
          username: staff.username,
          password: staff.password,
          next: '/admin',
        })
        .expect(303);
      const cookies = ([] as string[])
        .concat(signIn.headers['set-cookie'] ?? [])
        .map((cookie) => cookie.split(';')[0])
        .join('; ');
      const onB = await request(b.url).get('/admin').set('Cookie', cookies).expect(200);
      expect(onB.text).toContain(staff.username);
      await request(b.url).get('/admin').expect(303);
    });

    it('20 concurrent confirms of one library split across A and B create exactly one node', async () => {
      const lib = await createLibrary(a.url, owner.access, {
        ...nextPosition(),
        mapdb_submission_allowed: true,
      });
      await moderate(b.url, staff, lib.slug, { status: 'approved' });
      await checkPasses(a.url, staff, lib.slug);
      map.reset();
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          request(i % 2 ? a.url : b.url)
            .post(`/api/v1/admin/map-contributions/${lib.slug}/confirm`)
            .set('Authorization', bearer(staff.access))
            .send({})
            .then((res) => res),
        ),
      );
      expect(responses.map((res) => res.status).sort()).toEqual([200, ...Array(19).fill(409)]);
      expect(map.nodes.size).toBe(1);
      expect(map.requestsTo('node.create')).toHaveLength(1);
      expect(map.changesets.size).toBe(1);
    });

    // Last: the console sign-in counts against the same login tier.
    it('shares the rate limit: the N+1-th login attempt is 429 whichever instance gets it', async () => {
      const user = await registerUser(a.url);
      // One client (as the load balancer forwards it), its attempts spread over both instances.
      const client = '203.0.113.19';
      for (let i = 0; i < LOGIN_LIMIT; i += 1) {
        await request(next().url)
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', client)
          .send({ username: user.username, password: 'wrong-password' })
          .expect(401);
      }
      for (const instance of [a, b]) {
        const res = await request(instance.url)
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', client)
          .send({ username: user.username, password: user.password })
          .expect(429);
        expect(res.body.message).toBe('Too many login attempts. Please try again later.');
      }
    });
  });
});
