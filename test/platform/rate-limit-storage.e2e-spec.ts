import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisSlidingWindowStorage } from '../../src/common/rate-limit/sliding-window.storage.js';
import { describeWithRedis, requireRedisUrl } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { rateLimitStorageContract, WINDOW } from '../support/rate-limit-storage.contract.js';

describeWithRedis('RedisSlidingWindowStorage: the rate-limit storage contract', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(requireRedisUrl());
  });

  afterAll(async () => {
    await redis.quit();
  });

  rateLimitStorageContract((clock) => {
    const prefix = `t${randomBytes(6).toString('hex')}:ratelimit:`;
    return {
      storage: new RedisSlidingWindowStorage(redis, clock, prefix),
      storedHits: (key) => redis.zcard(`${prefix}${key}`),
      close: async () => {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
      },
    };
  });
});

describeWithRedis('RedisSlidingWindowStorage on a real Redis (decisions §2)', () => {
  let redis: Redis;
  let clock: FakeClock;
  let prefix: string;
  let storage: RedisSlidingWindowStorage;

  beforeAll(() => {
    redis = new Redis(requireRedisUrl());
  });

  afterAll(async () => {
    await redis.quit();
  });

  beforeEach(() => {
    clock = new FakeClock();
    prefix = `t${randomBytes(6).toString('hex')}:ratelimit:`;
    storage = new RedisSlidingWindowStorage(redis, clock, prefix);
  });

  afterEach(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  });

  /** Hits `key` n times at the current instant and returns whether each was allowed. */
  async function allowedOf(key: string, n: number, limit: number): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < n; i += 1) out.push(!(await storage.hit(key, WINDOW, limit)).isBlocked);
    return out;
  }

  it('keeps keys independent, and keeps them under its prefix', async () => {
    expect(await allowedOf('a', 3, 2)).toEqual([true, true, false]);
    expect(await allowedOf('b', 3, 2)).toEqual([true, true, false]);
    expect(await allowedOf('a:127.0.0.2', 1, 2)).toEqual([true]);
    expect((await storage.hit('a', WINDOW, 2)).isBlocked).toBe(true);
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}a`,
      `${prefix}a:127.0.0.2`,
      `${prefix}b`,
    ]);
  });

  it('keeps separate prefixes apart (two deployments on one Redis)', async () => {
    const other = new RedisSlidingWindowStorage(redis, clock, `${prefix}other:`);
    expect(await allowedOf('k', 3, 2)).toEqual([true, true, false]);
    expect((await other.hit('k', WINDOW, 2)).isBlocked).toBe(false);
  });

  it('lets idle keys expire: the key lives no longer than the window after its newest request', async () => {
    await storage.hit('k', WINDOW, 1);
    const ttl = await redis.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(WINDOW);
    await storage.hit('short', 1_000, 1);
    const shortTtl = await redis.pttl(`${prefix}short`);
    expect(shortTtl).toBeGreaterThan(0);
    expect(shortTtl).toBeLessThanOrEqual(1_000);
  });

  it('is atomic: 50 concurrent hits through two clients on one key allow exactly 10', async () => {
    const second = new Redis(requireRedisUrl());
    try {
      const storages = [storage, new RedisSlidingWindowStorage(second, clock, prefix)];
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, index) => storages[index % 2].hit('race', WINDOW, 10)),
      );
      expect(results.filter((r) => !r.isBlocked)).toHaveLength(10);
      expect(results.filter((r) => r.isBlocked)).toHaveLength(40);
      expect(
        results
          .filter((r) => !r.isBlocked)
          .map((r) => r.totalHits)
          .sort((a, b) => a - b),
      ).toEqual(Array.from({ length: 10 }, (_, index) => index + 1));
      expect(await redis.zcard(`${prefix}race`)).toBe(10);
    } finally {
      await second.quit();
    }
  });
});
