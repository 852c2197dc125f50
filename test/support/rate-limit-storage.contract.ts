/**
 * The behaviour every rate-limit storage promises (decisions §2: a true sliding window per key, refused requests
 * not counted, Retry-After from the oldest counted request), run against each implementation: the in-process one
 * (src/common/rate-limit/sliding-window.storage.spec.ts) and the Redis one (test/platform/rate-limit-storage…).
 * Tests of what only one of them has (sweeping, Redis keys, TTLs, atomicity across clients) stay in those files.
 */
import type { RateLimitStorage } from '../../src/common/rate-limit/sliding-window.storage.js';
import { FakeClock } from './clock.js';

export const WINDOW = 300_000;

export interface StorageUnderTest {
  storage: RateLimitStorage;
  /** How many requests the storage holds for `key`, where the implementation can tell (Redis: ZCARD). */
  storedHits?: (key: string) => Promise<number>;
  close?: () => Promise<void> | void;
}

/** Declares the contract's tests; `make` builds a fresh storage on `clock` before each test. */
export function rateLimitStorageContract(
  make: (clock: FakeClock) => StorageUnderTest | Promise<StorageUnderTest>,
): void {
  let clock: FakeClock;
  let subject: StorageUnderTest;
  let storage: RateLimitStorage;

  beforeEach(async () => {
    // Starts on a 5-minute boundary, so a fixed-window implementation would align with it.
    clock = new FakeClock(Date.parse('2026-06-15T12:00:00.000Z'));
    subject = await make(clock);
    storage = subject.storage;
  });

  afterEach(async () => {
    await subject?.close?.();
  });

  /** Hits `key` n times at the current instant and returns whether each was allowed. */
  async function allowedOf(key: string, n: number, limit: number): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < n; i += 1) out.push(!(await storage.hit(key, WINDOW, limit)).isBlocked);
    return out;
  }

  async function expectStored(key: string, count: number): Promise<void> {
    if (subject.storedHits) expect(await subject.storedHits(key)).toBe(count);
  }

  it('allows exactly `limit` requests, then blocks', async () => {
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await storage.hit('k', WINDOW, 3));
    expect(results.map((r) => r.isBlocked)).toEqual([false, false, false, true]);
    expect(results.map((r) => r.totalHits)).toEqual([1, 2, 3, 3]);
    expect(results.slice(0, 3).every((r) => r.retryAfterSeconds === 0)).toBe(true);
    expect(results[3].retryAfterSeconds).toBe(300);
    await expectStored('k', 3);
  });

  it('does not record refused requests: knocking while blocked frees the slot as soon as the oldest ages out', async () => {
    await storage.hit('k', WINDOW, 2); // t0
    clock.advance(10_000);
    await storage.hit('k', WINDOW, 2); // t0+10 s
    for (let step = 0; step < 5; step += 1) {
      clock.advance(50_000); // knocks at t0+60 s … t0+260 s
      expect(await allowedOf('k', 10, 2)).toEqual(Array(10).fill(false));
    }
    await expectStored('k', 2);
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
    await storage.hit('k', WINDOW, 2); // t0+window-1 ms, the last millisecond of that bucket
    expect((await storage.hit('k', WINDOW, 2)).isBlocked).toBe(true);
    clock.advance(1); // t0+window: a fixed window starts afresh here; a sliding one frees only the t0 slot
    expect(await storage.hit('k', WINDOW, 2)).toMatchObject({ isBlocked: false, totalHits: 2 });
    expect(await storage.hit('k', WINDOW, 2)).toEqual({
      totalHits: 2,
      isBlocked: true,
      retryAfterSeconds: 300, // ceil(299 999 ms) until the t0+window-1 ms request leaves
    });
    clock.advance(WINDOW - 1); // t0+2·window-1 ms: that request leaves now
    expect(await allowedOf('k', 2, 2)).toEqual([true, false]);
  });

  it('does not let a burst at the end of one bucket be followed by a burst at the start of the next', async () => {
    clock.advance(WINDOW - 2_000); // t0+298 s
    expect(await allowedOf('k', 3, 3)).toEqual([true, true, true]);
    clock.advance(2_000); // t0+300 s: a fixed, clock-aligned window would reset here
    expect(await allowedOf('k', 3, 3)).toEqual([false, false, false]);
    clock.advance(WINDOW - 2_000); // the burst is exactly window old
    expect(await allowedOf('k', 4, 3)).toEqual([true, true, true, false]);
  });

  it('derives retryAfterSeconds from the oldest counted request, rounded up, never below 1', async () => {
    await storage.hit('k', WINDOW, 2); // t0
    clock.advance(100_000);
    await storage.hit('k', WINDOW, 2); // t0+100 s
    const cases: [number, number][] = [
      [1, 200], // t0+100.001 s → 199.999 s left for the t0 request → 200 (not 300 for the newest)
      [499, 200], // t0+100.5 s → 199.5 s → 200
      [500, 199], // t0+101 s → 199 s
      [198_000, 1], // t0+299 s → exactly 1 s
      [999, 1], // t0+299.999 s → 1 ms → 1, never 0
    ];
    for (const [advance, expected] of cases) {
      clock.advance(advance);
      const result = await storage.hit('k', WINDOW, 2);
      expect(result.isBlocked).toBe(true);
      expect(Number.isInteger(result.retryAfterSeconds)).toBe(true);
      expect(result.retryAfterSeconds).toBe(expected);
    }
    clock.advance(1); // t0+300 s
    expect((await storage.hit('k', WINDOW, 2)).isBlocked).toBe(false);
    expect(await storage.hit('k', WINDOW, 2)).toEqual({
      totalHits: 2,
      isBlocked: true,
      retryAfterSeconds: 100,
    });
  });

  it('keeps keys independent', async () => {
    expect(await allowedOf('a', 3, 2)).toEqual([true, true, false]);
    expect(await allowedOf('b', 3, 2)).toEqual([true, true, false]);
    expect(await allowedOf('a:127.0.0.2', 1, 2)).toEqual([true]);
    expect((await storage.hit('a', WINDOW, 2)).isBlocked).toBe(true);
  });

  it('honours the window it is given per call', async () => {
    await storage.hit('k', 60_000, 1);
    clock.advance(59_999);
    expect(await storage.hit('k', 60_000, 1)).toMatchObject({
      isBlocked: true,
      retryAfterSeconds: 1,
    });
    clock.advance(1);
    expect((await storage.hit('k', 60_000, 1)).isBlocked).toBe(false);
  });

  describe('as @nestjs/throttler ThrottlerStorage', () => {
    it('increment() counts like hit(), with throttler’s record in whole seconds', async () => {
      expect(await storage.increment('k', WINDOW, 2, 0, 'tier')).toEqual({
        totalHits: 1,
        isBlocked: false,
        timeToExpire: 300,
        timeToBlockExpire: 0,
      });
      clock.advance(100_000);
      await storage.increment('k', WINDOW, 2, 0, 'tier');
      clock.advance(500);
      expect(await storage.increment('k', WINDOW, 2, 0, 'tier')).toEqual({
        totalHits: 2,
        isBlocked: true,
        timeToExpire: 200, // ceil(199.5 s) until the first request leaves
        timeToBlockExpire: 200,
      });
      // The refused call was not counted: the same key through hit() sees two.
      expect(await storage.hit('k', WINDOW, 3)).toMatchObject({ totalHits: 3, isBlocked: false });
    });

    it('refuses a penalty block (blockDuration > 0), which this sliding window does not implement', async () => {
      await expect(storage.increment('k', WINDOW, 2, WINDOW, 'tier')).rejects.toThrow(
        /blockDuration must be 0/,
      );
      await expectStored('k', 0);
    });
  });
}
