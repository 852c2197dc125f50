import { randomBytes } from 'node:crypto';
import { Controller, Get, Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import request, { type Response } from 'supertest';
import { Public } from '../../src/common/auth/public.decorator.js';
import { NoRateLimit } from '../../src/common/rate-limit/rate-limit.decorator.js';
import {
  createTestApp,
  describeWithRedis,
  requireRedisUrl,
  type TestApp,
  type TestAppOptions,
} from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { RateLimitProbeModule } from '../support/rate-limit-probe.module.js';
import { useTestSuite } from '../support/suite.js';

const GENERIC = 'Too many requests. Please try again later.';
const SECOND = 1_000;
const WINDOW = 300 * SECOND;

interface Route {
  method: 'get' | 'post' | 'delete';
  path: string;
  body?: object;
}

const READ: Route = { method: 'get', path: 'read' };
const READ_OTHER: Route = { method: 'get', path: 'read-other' };
const WRITE: Route = { method: 'post', path: 'write', body: { name: 'ok' } };
const WRITE_INVALID: Route = { method: 'post', path: 'write', body: {} };
const LOGIN: Route = { method: 'post', path: 'login' };
const SHARED_ADD: Route = { method: 'post', path: 'shared' };
const SHARED_REMOVE: Route = { method: 'delete', path: 'shared' };
const GUARDED: Route = { method: 'get', path: 'guarded' };
const GUARDED_GLOBAL: Route = { method: 'get', path: 'guarded-global' };

/** The contract of api-spec.md "Rate limits" and decisions §2, written out rather than imported. */
const TIERS: { tier: string; route: Route; limit: number; ok: number; message: string }[] = [
  { tier: 'read', route: READ, limit: 60, ok: 200, message: GENERIC },
  { tier: 'write', route: WRITE, limit: 10, ok: 201, message: GENERIC },
  {
    tier: 'login',
    route: LOGIN,
    limit: 10,
    ok: 200,
    message: 'Too many login attempts. Please try again later.',
  },
  {
    tier: 'register',
    route: { method: 'post', path: 'register' },
    limit: 5,
    ok: 201,
    message: 'Too many registration attempts. Please try again later.',
  },
  {
    tier: 'refresh',
    route: { method: 'post', path: 'refresh' },
    limit: 15,
    ok: 200,
    message: 'Too many refresh attempts. Please try again later.',
  },
  {
    tier: 'social',
    route: { method: 'post', path: 'social' },
    limit: 10,
    ok: 200,
    message: 'Too many social login attempts. Please try again later.',
  },
  { tier: 'map', route: { method: 'get', path: 'map' }, limit: 600, ok: 200, message: GENERIC },
];

function call(t: TestApp, route: Route, forwardedFor?: string): Promise<Response> {
  let req = request(t.http)[route.method](`/api/v1/probe-rl/${route.path}`);
  if (forwardedFor !== undefined) req = req.set('X-Forwarded-For', forwardedFor);
  return route.body ? req.send(route.body) : req;
}

/** Statuses of `n` sequential requests. */
async function statuses(
  t: TestApp,
  route: Route,
  n: number,
  forwardedFor?: string,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push((await call(t, route, forwardedFor)).status);
  return out;
}

/** One request that must be refused; returns its retry_after after checking the 429 envelope. */
async function refused(
  t: TestApp,
  route: Route,
  message = GENERIC,
  forwardedFor?: string,
): Promise<number> {
  const res = await call(t, route, forwardedFor);
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ message, details: { retry_after: expect.any(Number) } });
  const retryAfter = res.body.details.retry_after as number;
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  return retryAfter;
}

const times = (n: number, status: number): number[] => Array<number>(n).fill(status);

describe('rate limits (api-spec "Rate limits", decisions §2)', () => {
  // Each test starts its own apps (closed after it) on the suite's database.
  const { db } = useTestSuite({ app: false });
  const apps: TestApp[] = [];

  async function start(options: Omit<TestAppOptions, 'databaseUrl'> = {}): Promise<TestApp> {
    const t = await createTestApp({
      databaseUrl: db.url,
      ...options,
      imports: [RateLimitProbeModule, ...(options.imports ?? [])],
    });
    apps.push(t);
    return t;
  }

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((t) => t.close()));
  });

  describe('tiers with their default limits', () => {
    it.each(TIERS.map((tier) => [tier.tier, tier] as const))(
      '%s: the first N requests pass, the N+1-th is 429 with the tier message and retry_after',
      async (_name, { route, limit, ok, message }) => {
        const t = await start();
        expect(await statuses(t, route, limit)).toEqual(times(limit, ok));
        // Nothing has aged yet: the oldest request leaves in exactly one window.
        expect(await refused(t, route, message)).toBe(300);
        expect(await refused(t, route, message)).toBe(300);
      },
    );
  });

  describe('what counts', () => {
    it('counts a request whatever its outcome (422 included) and refuses the one over the limit before validating it', async () => {
      const t = await start();
      expect(await statuses(t, WRITE, 5)).toEqual(times(5, 201));
      expect(await statuses(t, WRITE_INVALID, 5)).toEqual(times(5, 422));
      await refused(t, WRITE_INVALID); // 429, not 422
      await refused(t, WRITE);
    });

    it.each([
      ['a route guard', GUARDED],
      ['a global guard of a feature module', GUARDED_GLOBAL],
    ])(
      'refuses the one over the limit before %s (such as authentication) runs',
      async (_name, route) => {
        const t = await start({ env: { RATE_LIMIT_READ: '3' } });
        expect(await statuses(t, route, 3)).toEqual([401, 401, 401]); // refused requests still count
        await refused(t, route); // 429, not 401
      },
    );

    it('counts malformed and oversized JSON bodies too, and refuses them with 429 once over the limit', async () => {
      const t = await start({ env: { RATE_LIMIT_WRITE: '3' } });
      const post = () =>
        request(t.http).post('/api/v1/probe-rl/write').set('Content-Type', 'application/json');
      expect((await post().send('{"name": ')).status).toBe(400);
      expect(
        (await post().send(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }))).status,
      ).toBe(413);
      expect((await post().send('{"name": "ok"}')).status).toBe(201);
      const over = await post().send('{"name": ');
      expect(over.status).toBe(429);
      expect(over.body.details.retry_after).toBe(300);
    });

    it('does not count the 429s: a client that keeps knocking gets a slot exactly when the oldest ages out', async () => {
      const t = await start({ env: { RATE_LIMIT_READ: '3' } });
      const startedAt = t.clock.now();
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0
      t.clock.advance(10 * SECOND);
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0+10 s
      t.clock.advance(10 * SECOND);
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0+20 s
      for (const at of [100, 200, 299]) {
        t.clock.set(startedAt + at * SECOND);
        expect(await statuses(t, READ, 10)).toEqual(times(10, 429));
      }
      t.clock.set(startedAt + WINDOW - 1);
      expect(await refused(t, READ)).toBe(1);
      t.clock.advance(1); // t0+300 s: the t0 request leaves; none of the 31 refused ones ever counted
      expect(await statuses(t, READ, 1)).toEqual([200]);
      expect(await refused(t, READ)).toBe(10); // the t0+10 s request is now the oldest
      t.clock.advance(10 * SECOND);
      expect(await statuses(t, READ, 1)).toEqual([200]);
      expect(await refused(t, READ)).toBe(10);
    });
  });

  describe('the sliding window', () => {
    it('gives retry_after as the whole seconds until the oldest counted request leaves, counting down', async () => {
      const t = await start({ env: { RATE_LIMIT_READ: '2' } });
      const startedAt = t.clock.now();
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0
      t.clock.advance(100 * SECOND);
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0+100 s
      const seen: number[] = [];
      for (const [at, expected] of [
        [100_001, 200], // from the t0 request (not the newest, which would give 300)
        [150_500, 150], // 149.5 s rounds up
        [151_000, 149],
        [299_000, 1],
        [299_999, 1], // 1 ms left: still 1, never 0
      ]) {
        t.clock.set(startedAt + at);
        const retryAfter = await refused(t, READ);
        expect(retryAfter).toBe(expected);
        seen.push(retryAfter);
      }
      expect([...seen].sort((a, b) => b - a)).toEqual(seen);
      t.clock.set(startedAt + WINDOW);
      expect(await statuses(t, READ, 1)).toEqual([200]);
      expect(await refused(t, READ)).toBe(100); // now the t0+100 s request is the oldest
    });

    it('stops counting a request exactly at t0+300 s, not earlier, and does not reset like a fixed window', async () => {
      const t = await start({ env: { RATE_LIMIT_READ: '2' } });
      // The fake clock starts on a 5-minute boundary, so t0+299.999 s is the last millisecond of a fixed bucket.
      expect(t.clock.now() % WINDOW).toBe(0);
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0
      t.clock.advance(WINDOW - 1);
      expect(await statuses(t, READ, 1)).toEqual([200]); // t0+299.999 s
      expect(await refused(t, READ)).toBe(1); // the t0 request still counts
      t.clock.advance(1); // t0+300 s: the t0 request leaves, the other stays
      expect(await statuses(t, READ, 1)).toEqual([200]);
      expect(await refused(t, READ)).toBe(300); // a fixed window would have allowed this one
      t.clock.advance(WINDOW - 2);
      expect(await refused(t, READ)).toBe(1);
      t.clock.advance(1); // t0+599.999 s: the t0+299.999 s request leaves
      expect(await statuses(t, READ, 2)).toEqual([200, 429]);
    });
  });

  describe('counters', () => {
    it('keeps one counter per endpoint', async () => {
      const t = await start({ env: { RATE_LIMIT_READ: '2', RATE_LIMIT_WRITE: '2' } });
      expect(await statuses(t, READ, 3)).toEqual([200, 200, 429]);
      expect(await statuses(t, READ_OTHER, 3)).toEqual([200, 200, 429]);
      expect(await statuses(t, WRITE, 3)).toEqual([201, 201, 429]);
      expect(await statuses(t, LOGIN, 1)).toEqual([200]);
    });

    it('shares one counter between the routes naming the same bucket, and only between them', async () => {
      const t = await start({ env: { RATE_LIMIT_WRITE: '4' } });
      const startedAt = t.clock.now();
      expect(await statuses(t, SHARED_REMOVE, 1)).toEqual([204]); // t0, the oldest of the bucket
      t.clock.advance(60 * SECOND);
      expect(await statuses(t, SHARED_ADD, 1)).toEqual([201]);
      expect(await statuses(t, SHARED_REMOVE, 1)).toEqual([204]);
      expect(await statuses(t, SHARED_ADD, 1)).toEqual([201]);
      expect(await refused(t, SHARED_ADD)).toBe(240); // counted from the DELETE at t0
      expect(await refused(t, SHARED_REMOVE)).toBe(240);
      expect(await statuses(t, WRITE, 4)).toEqual(times(4, 201)); // another write endpoint: its own counter
      t.clock.set(startedAt + WINDOW);
      expect(await statuses(t, SHARED_ADD, 1)).toEqual([201]);
      expect(await statuses(t, SHARED_REMOVE, 1)).toEqual([429]);
    });
  });

  describe('configuration', () => {
    it('takes the limits from RATE_LIMIT_<TIER>', async () => {
      const t = await start({
        env: { RATE_LIMIT_READ: '3', RATE_LIMIT_LOGIN: '2', RATE_LIMIT_REGISTER: '1' },
      });
      expect(await statuses(t, READ, 4)).toEqual([200, 200, 200, 429]);
      expect(await statuses(t, LOGIN, 3)).toEqual([200, 200, 429]);
      expect(await statuses(t, TIERS[3].route, 2)).toEqual([201, 429]);
      expect(await statuses(t, WRITE, 10)).toEqual(times(10, 201)); // untouched tier keeps its default
      expect(await statuses(t, WRITE, 1)).toEqual([429]);
    });

    it('takes the window from RATE_LIMIT_WINDOW_SECONDS', async () => {
      const t = await start({ env: { RATE_LIMIT_WINDOW_SECONDS: '60', RATE_LIMIT_READ: '1' } });
      expect(await statuses(t, READ, 1)).toEqual([200]);
      expect(await refused(t, READ)).toBe(60);
      t.clock.advance(60 * SECOND - 1);
      expect(await refused(t, READ)).toBe(1);
      t.clock.advance(1);
      expect(await statuses(t, READ, 2)).toEqual([200, 429]);
    });

    it('switches every limit off with RATE_LIMIT_ENABLED=false', async () => {
      const t = await start({
        env: { RATE_LIMIT_ENABLED: 'false', RATE_LIMIT_READ: '1', RATE_LIMIT_LOGIN: '1' },
      });
      expect(await statuses(t, READ, 10)).toEqual(times(10, 200));
      expect(await statuses(t, LOGIN, 10)).toEqual(times(10, 200));
    });
  });

  describe('the client is the socket peer; X-Forwarded-For only behind a trusted proxy', () => {
    it('ignores X-Forwarded-For without TRUST_PROXY: spoofed addresses all hit one counter', async () => {
      const t = await start({ env: { RATE_LIMIT_READ: '2' } });
      expect((await call(t, READ, '203.0.113.1')).status).toBe(200);
      expect((await call(t, READ, '203.0.113.2')).status).toBe(200);
      await refused(t, READ, GENERIC, '203.0.113.3');
      await refused(t, READ);
    });

    it.each(['loopback', '1'])(
      'honours X-Forwarded-For with TRUST_PROXY=%s: one counter per forwarded client',
      async (trustProxy) => {
        const t = await start({ env: { RATE_LIMIT_READ: '2', TRUST_PROXY: trustProxy } });
        expect(await statuses(t, READ, 3, '203.0.113.1')).toEqual([200, 200, 429]);
        expect(await statuses(t, READ, 3, '203.0.113.2')).toEqual([200, 200, 429]);
        expect(await statuses(t, READ, 3)).toEqual([200, 200, 429]); // the proxy itself, without the header
        // Only the address the trusted proxy saw counts: entries the client prepends do not make it new.
        expect(await statuses(t, READ, 1, '198.51.100.1, 203.0.113.3')).toEqual([200]);
        expect(await statuses(t, READ, 1, '198.51.100.2, 203.0.113.3')).toEqual([200]);
        await refused(t, READ, GENERIC, '198.51.100.3, 203.0.113.3');
      },
    );
  });

  describeWithRedis('several instances', () => {
    let redis: Redis;
    let prefix: string;

    beforeAll(() => {
      redis = new Redis(requireRedisUrl());
    });

    beforeEach(() => {
      prefix = `t${randomBytes(6).toString('hex')}:`;
    });

    afterEach(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
    });

    afterAll(async () => {
      await redis.quit();
    });

    it('share one limit through Redis with the same REDIS_KEY_PREFIX: the combined N+1-th is refused', async () => {
      const clock = new FakeClock();
      const startedAt = clock.now();
      const a = await start({ redis: true, clock, env: { REDIS_KEY_PREFIX: prefix } });
      const b = await start({ redis: true, clock, env: { REDIS_KEY_PREFIX: prefix } });
      const seen: number[] = [];
      for (let i = 0; i < 10; i += 1) {
        seen.push((await call(i % 2 ? b : a, WRITE)).status);
        clock.advance(SECOND);
      }
      expect(seen).toEqual(times(10, 201));
      expect(await refused(a, WRITE)).toBe(290); // the first request, on a at t0, leaves at t0+300 s
      expect(await refused(b, WRITE)).toBe(290);
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((key) => key.startsWith(`${prefix}ratelimit:`))).toBe(true);

      clock.set(startedAt + WINDOW); // one slot frees, for both instances at once
      expect((await call(b, WRITE)).status).toBe(201);
      expect(await refused(a, WRITE)).toBe(1);
    });

    it('keep separate limits with different REDIS_KEY_PREFIX values', async () => {
      const a = await start({
        redis: true,
        env: { REDIS_KEY_PREFIX: prefix, RATE_LIMIT_READ: '2' },
      });
      const b = await start({
        redis: true,
        env: { REDIS_KEY_PREFIX: `${prefix}other:`, RATE_LIMIT_READ: '2' },
      });
      expect(await statuses(a, READ, 3)).toEqual([200, 200, 429]);
      expect(await statuses(b, READ, 3)).toEqual([200, 200, 429]);
    });

    it('(contrast) without Redis each instance counts on its own and allows N', async () => {
      const clock = new FakeClock();
      const a = await start({ clock });
      const b = await start({ clock });
      expect(await statuses(a, WRITE, 10)).toEqual(times(10, 201));
      expect(await statuses(b, WRITE, 10)).toEqual(times(10, 201));
      await refused(a, WRITE);
      await refused(b, WRITE);
    });
  });

  describe('every route names its tier', () => {
    @Public()
    @Controller('probe-untiered')
    class UntieredController {
      @Get()
      list() {
        return [];
      }
    }

    @Module({ controllers: [UntieredController] })
    class UntieredModule {}

    @Public()
    @NoRateLimit()
    @Controller('probe-unlimited')
    class UnlimitedController {
      @Get()
      list() {
        return [];
      }
    }

    @Module({ controllers: [UnlimitedController] })
    class UnlimitedModule {}

    it('refuses to boot an app that has a route without @RateLimit, naming the route', async () => {
      const booting = createTestApp({
        databaseUrl: db.url,
        imports: [RateLimitProbeModule, UntieredModule],
      });
      await expect(booting).rejects.toThrow(/without a @RateLimit tier/);
      await expect(booting).rejects.toThrow(/UntieredController\.list/);
    });

    it('boots with an explicit @NoRateLimit, and does not limit that route', async () => {
      const t = await start({ imports: [UnlimitedModule], env: { RATE_LIMIT_READ: '1' } });
      for (let i = 0; i < 5; i += 1)
        await request(t.http).get('/api/v1/probe-unlimited').expect(200);
      expect(await statuses(t, READ, 2)).toEqual([200, 429]);
    });
  });
});
