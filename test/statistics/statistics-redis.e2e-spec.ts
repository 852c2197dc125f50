/**
 * GET /statistics/ with REDIS_URL (decisions §4): two instances sharing a key prefix serve the same cached figures
 * for five minutes; once the shared entry is gone both compute the new ones.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { describeWithRedis, requireRedisUrl, type TestApp } from '../support/app.js';
import { insertLibrary } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const totals = async (t: TestApp): Promise<number> => {
  const res = await request(t.http).get('/api/v1/statistics/');
  expect(res.status).toBe(200);
  return res.body.total_approved as number;
};

describeWithRedis('GET /statistics/ cached in Redis across instances', () => {
  const prefix = `t${randomBytes(6).toString('hex')}:`;
  const {
    db,
    t: a,
    startApp,
  } = useTestSuite({ redis: true, env: { REDIS_KEY_PREFIX: prefix, RATE_LIMIT_ENABLED: 'false' } });
  let redis: Redis;
  let b: TestApp;
  let loner: TestApp;

  const keys = (): Promise<string[]> => redis.keys(`${prefix}*`);

  beforeAll(async () => {
    redis = new Redis(requireRedisUrl());
    b = await startApp();
    // Same Redis, a prefix of its own: another deployment, with a cache of its own.
    loner = await startApp({ env: { RATE_LIMIT_ENABLED: 'false' } });
    await insertLibrary(db.url, { created_at: '2026-06-01T00:00:00.000Z' });
  });

  afterAll(async () => {
    if (redis) {
      const left = await keys();
      if (left.length) await redis.del(...left);
      redis.disconnect();
    }
  });

  it('instance B answers what instance A computed until the shared entry is gone; then both see the new data', async () => {
    expect(await totals(a)).toBe(1);
    const cached = await keys();
    expect(cached.length).toBeGreaterThan(0);
    const ttls = await Promise.all(cached.map((key) => redis.ttl(key)));
    for (const ttl of ttls) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(300);
    }

    await insertLibrary(db.url, { created_at: '2026-06-02T00:00:00.000Z' });
    expect(await totals(b)).toBe(1);
    expect(await totals(a)).toBe(1);
    // Moving an instance's clock does not expire the shared entry: Redis keeps the time.
    b.clock.advance(301_000);
    expect(await totals(b)).toBe(1);
    expect(await totals(loner)).toBe(2);

    await redis.del(...cached);
    expect(await totals(b)).toBe(2);
    expect(await totals(a)).toBe(2);
  });

  it('the whole answer is shared, not just the totals', async () => {
    const [fromA, fromB] = await Promise.all([
      request(a.http).get('/api/v1/statistics/'),
      request(b.http).get('/api/v1/statistics/'),
    ]);
    expect(fromB.body).toEqual(fromA.body);
    expect(fromA.body.top_countries).toEqual([
      { country_code: 'DE', country_name: 'Germany', flag_emoji: '🇩🇪', count: 2 },
    ]);
  });
});
