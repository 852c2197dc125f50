import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisSlidingWindowStorage } from '../../src/common/rate-limit/sliding-window.storage.js';
import { describeWithRedis, requireRedisUrl } from '../support/app.js';
import { FakeClock } from '../support/clock.js';

const WINDOW = 300_000;

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

  it('allows exactly `limit` requests, then blocks', async () => {
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await storage.hit('k', WINDOW, 3));
    expect(results.map((r) => r.isBlocked)).toEqual([false, false, false, true]);
    expect(results.map((r) => r.totalHits)).toEqual([1, 2, 3, 3]);
    expect(results.slice(0, 3).every((r) => r.retryAfterSeconds === 0)).toBe(true);
    expect(results[3].retryAfterSeconds).toBe(300);
    expect(await redis.zcard(`${prefix}k`)).toBe(3);
  });

  it('does not record refused requests: knocking while blocked frees the slot as soon as the oldest ages out', async () => {
    await storage.hit('k', WINDOW, 2); // t0
    clock.advance(10_000);
    await storage.hit('k', WINDOW, 2); // t0+10 s
    for (let step = 0; step < 5; step += 1) {
      clock.advance(50_000); // knocks at t0+60 s … t0+260 s
      expect(await allowedOf('k', 10, 2)).toEqual(Array(10).fill(false));
    }
    expect(await redis.zcard(`${prefix}k`)).toBe(2);
    clock.advance(40_000); // t0+300 s: the t0 request leaves, the knocks never counted
    expect(await allowedOf('k', 2, 2)).toEqual([true, false]);
    clock.advance(10_000); // t0+310 s: the t0+10 s request leaves
    expect(await allowedOf('k', 2, 2)).toEqual([true, false]);
  });

  it('counts a request while its age is below the window and drops it exactly at the window', async () => {
    await storage.hit('k', WINDOW, 1);
    clock.advance(WINDOW - 1);
    expect(await storage.hit('k', WINDOW, 1)).toEqual({
      totalHits: 1,
      isBlocked: true,
      retryAfterSeconds: 1,
    });
    clock.advance(1);
    expect(await storage.hit('k', WINDOW, 1)).toEqual({
      totalHits: 1,
      isBlocked: false,
      retryAfterSeconds: 0,
    });
  });

  it('slides rather than resetting in fixed buckets (a fixed window would allow 2 at t0+window)', async () => {
    await storage.hit('k', WINDOW, 2); // t0, on a 5-minute boundary
    clock.advance(WINDOW - 1);
    await storage.hit('k', WINDOW, 2); // t0+window-1 ms
    expect((await storage.hit('k', WINDOW, 2)).isBlocked).toBe(true);
    clock.advance(1); // t0+window: only the t0 slot frees
    expect(await storage.hit('k', WINDOW, 2)).toMatchObject({ isBlocked: false, totalHits: 2 });
    expect(await storage.hit('k', WINDOW, 2)).toEqual({
      totalHits: 2,
      isBlocked: true,
      retryAfterSeconds: 300,
    });
    clock.advance(WINDOW - 1);
    expect(await allowedOf('k', 2, 2)).toEqual([true, false]);
  });

  it('does not let a burst at the end of one bucket be followed by a burst at the start of the next', async () => {
    clock.advance(WINDOW - 2_000);
    expect(await allowedOf('k', 3, 3)).toEqual([true, true, true]);
    clock.advance(2_000);
    expect(await allowedOf('k', 3, 3)).toEqual([false, false, false]);
    clock.advance(WINDOW - 2_000);
    expect(await allowedOf('k', 4, 3)).toEqual([true, true, true, false]);
  });

  it('derives retryAfterSeconds from the oldest counted request, rounded up, never below 1', async () => {
    await storage.hit('k', WINDOW, 2); // t0
    clock.advance(100_000);
    await storage.hit('k', WINDOW, 2); // t0+100 s
    const cases: [number, number][] = [
      [1, 200],
      [499, 200],
      [500, 199],
      [198_000, 1],
      [999, 1],
    ];
    for (const [advance, expected] of cases) {
      clock.advance(advance);
      const result = await storage.hit('k', WINDOW, 2);
      expect(result.isBlocked).toBe(true);
      expect(Number.isInteger(result.retryAfterSeconds)).toBe(true);
      expect(result.retryAfterSeconds).toBe(expected);
    }
    clock.advance(1);
    expect((await storage.hit('k', WINDOW, 2)).isBlocked).toBe(false);
    expect(await storage.hit('k', WINDOW, 2)).toEqual({
      totalHits: 2,
      isBlocked: true,
      retryAfterSeconds: 100,
    });
  });

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
