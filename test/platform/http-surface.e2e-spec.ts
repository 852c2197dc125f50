import { Writable } from 'node:stream';
import request from 'supertest';
import { MediaStorage } from '../../src/common/media/media-storage.js';
import {
  createTestApp,
  describeWithDatabaseServer,
  describeWithRedis,
  type TestApp,
} from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { ProbeModule } from '../support/probe.module.js';
import { useTestSuite } from '../support/suite.js';

class Collector extends Writable {
  lines: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

describe('HTTP surface: logs, caching headers, media, health', () => {
  let t: TestApp;
  const logs = new Collector();

  useTestSuite(
    {
      imports: [ProbeModule],
      env: { RATE_LIMIT_ENABLED: 'false' },
      logDestination: logs,
    },
    (s) => ({ t } = s),
  );

  describe('structured logs', () => {
    it('log one JSON line per request with its id, and never credentials', async () => {
      const secretToken = 'eyJhbGciOiJIUzI1NiJ9.SECRET-TOKEN-VALUE.sig';
      const res = await request(t.http)
        .post('/api/v1/probe/echo?token=QUERY-SECRET')
        .set('Authorization', `Bearer ${secretToken}`)
        .set('Cookie', 'session=COOKIE-SECRET')
        .send({ name: 'ok', password: 'hunter2-PASSWORD', refresh: 'REFRESH-SECRET' })
        .expect(201);
      const id = res.headers['x-request-id'];
      const line = logs.lines.map((text) => JSON.parse(text)).find((entry) => entry.req?.id === id);
      expect(line).toMatchObject({
        req: { method: 'POST', path: '/api/v1/probe/echo' },
        res: { statusCode: 201 },
      });
      const all = logs.lines.join('\n');
      for (const secret of [
        'SECRET-TOKEN-VALUE',
        'QUERY-SECRET',
        'COOKIE-SECRET',
        'hunter2-PASSWORD',
        'REFRESH-SECRET',
      ]) {
        expect(all).not.toContain(secret);
      }
    });

    it('carry the request id on every line written during the request, the error stack included', async () => {
      const id = 'boom-request-0042';
      await request(t.http).get('/api/v1/probe/boom').set('X-Request-Id', id).expect(500);
      const lines = logs.lines
        .map((text) => JSON.parse(text))
        .filter((entry) => entry.req?.id === id);
      const error = lines.find((entry) => entry.context === 'Errors');
      expect(error).toMatchObject({
        level: 50,
        msg: expect.stringMatching(/^GET \/api\/v1\/probe\/boom failed/),
      });
      expect(error.stack).toMatch(/\n\s+at /);
      expect(lines.find((entry) => entry.res)).toMatchObject({ res: { statusCode: 500 } });
    });

    it('keep each request id on its own lines when requests interleave (database waits, timers, failures)', async () => {
      const ids = Array.from({ length: 6 }, (_, i) => `interleaved-${i}`);
      await Promise.all(
        ids.map((id, i) =>
          request(t.http)
            .get(i % 2 ? '/api/v1/probe/bad-sql' : '/api/v1/probe/logged')
            .set('X-Request-Id', id)
            .expect(i % 2 ? 500 : 200),
        ),
      );
      const entries = logs.lines.map((text) => JSON.parse(text));
      for (const [i, id] of ids.entries()) {
        const own = entries.filter((entry) => entry.req?.id === id);
        const access = own.filter((entry) => entry.res);
        expect(access).toEqual([
          expect.objectContaining({ res: { statusCode: i % 2 ? 500 : 200 } }),
        ]);
        if (i % 2) {
          const error = own.find((entry) => entry.context === 'Errors');
          expect(error).toMatchObject({
            level: 50,
            msg: expect.stringMatching(/^GET \/api\/v1\/probe\/bad-sql failed/),
          });
          expect(error.stack).toMatch(/\n\s+at /);
        } else {
          expect(
            own.filter((entry) => entry.context === 'Probe').map((entry) => entry.msg),
          ).toEqual(['after a database round trip', 'after a macrotask hop']);
        }
      }
      // No application line of these requests was written without an id.
      const orphans = entries.filter(
        (entry) => (entry.context === 'Probe' || entry.context === 'Errors') && !entry.req?.id,
      );
      expect(orphans).toEqual([]);
    });

    it('keep Nest start-up chatter (modules, routes) out of info', () => {
      const entries = logs.lines.map((text) => JSON.parse(text));
      expect(
        entries.filter((e) =>
          ['InstanceLoader', 'RoutesResolver', 'RouterExplorer'].includes(e.context),
        ),
      ).toEqual([]);
    });
  });

  describe('Cache-Control', () => {
    it('lets anonymous reads of a public-cache route be cached publicly (≤ 300 s)', async () => {
      const res = await request(t.http).get('/api/v1/probe/cached').expect(200);
      expect(res.headers['cache-control']).toBe('public, max-age=0, s-maxage=120');
    });

    it('makes any read with a token private, no-store', async () => {
      const res = await request(t.http)
        .get('/api/v1/probe/cached')
        .set('Authorization', 'Bearer whatever')
        .expect(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    it('does not cache routes without a public-cache rule, nor errors', async () => {
      const items = await request(t.http).get('/api/v1/probe/items').expect(200);
      expect(items.headers['cache-control']).toBe('private, no-store');
      const missing = await request(t.http).get('/api/v1/nothing').expect(404);
      expect(missing.headers['cache-control']).toBe('private, no-store');
    });
  });

  describe('media', () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]);

    beforeAll(async () => {
      await t.app.get(MediaStorage).put('libraries/ab/sample.jpg', jpeg, 'image/jpeg');
    });

    it('serves stored files under /media/ with nosniff and a locked-down CSP', async () => {
      const res = await request(t.http).get('/media/libraries/ab/sample.jpg').expect(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(Buffer.compare(res.body as Buffer, jpeg)).toBe(0);
    });

    it.each([
      ['a directory (no listing)', '/media/libraries/'],
      ['the media root', '/media/'],
      ['a missing file', '/media/libraries/ab/missing.jpg'],
      ['a traversal', '/media/..%2f..%2fpackage.json'],
      ['an encoded traversal', '/media/%2e%2e/%2e%2e/package.json'],
      ['a dotfile', '/media/.secret'],
    ])('answers %s with the 404 envelope', async (_label, path) => {
      const res = await request(t.http).get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not found.', details: null });
    });

    it('refuses unsafe storage keys', async () => {
      await expect(
        t.app.get(MediaStorage).put('../escape.jpg', jpeg, 'image/jpeg'),
      ).rejects.toThrow(/unsafe/);
      await expect(
        t.app.get(MediaStorage).put('/abs/path.jpg', jpeg, 'image/jpeg'),
      ).rejects.toThrow(/unsafe/);
    });

    it('gives site-relative URLs, empty for no media', () => {
      const storage = t.app.get(MediaStorage);
      expect(storage.url('libraries/ab/sample.jpg')).toBe('/media/libraries/ab/sample.jpg');
      expect(storage.url(null)).toBe('');
    });
  });

  describe('health', () => {
    it('answers liveness and readiness outside the API prefix', async () => {
      expect((await request(t.http).get('/health').expect(200)).body).toEqual({
        status: 'ok',
        checks: {},
      });
      expect((await request(t.http).get('/ready').expect(200)).body).toEqual({
        status: 'ok',
        checks: { database: 'up' },
      });
    });
  });
});

describeWithDatabaseServer('readiness when the database is gone', () => {
  it('answers 503 with the failing check', async () => {
    const db = await createTestDatabase();
    const t = await createTestApp({ databaseUrl: db.url });
    try {
      await db.drop();
      const res = await request(t.http).get('/ready').expect(503);
      expect(res.body).toEqual({
        message: 'Service unavailable.',
        details: { checks: { database: 'down' } },
      });
    } finally {
      await t.close().catch(() => undefined);
    }
  });
});

describeWithRedis('readiness with Redis configured', () => {
  it('checks Redis too', async () => {
    const db = await createTestDatabase();
    const t = await createTestApp({ databaseUrl: db.url, redis: true });
    try {
      const res = await request(t.http).get('/ready').expect(200);
      expect(res.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up' } });
    } finally {
      await t.close();
      await db.drop();
    }
  });

  it('stays ready (200) with Redis reported degraded when Redis is unreachable', async () => {
    const db = await createTestDatabase();
    const t = await createTestApp({
      databaseUrl: db.url,
      env: { REDIS_URL: 'redis://127.0.0.1:1' },
    });
    try {
      const res = await request(t.http).get('/ready').expect(200);
      expect(res.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'degraded' } });
    } finally {
      await t.close().catch(() => undefined);
      await db.drop();
    }
  });
});
