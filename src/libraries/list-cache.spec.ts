import { Clock } from '../common/clock.js';
import { ListCache } from './list-cache.js';

class ManualClock extends Clock {
  current = 1_000_000;

  override now(): number {
    return this.current;
  }
}

describe('ListCache', () => {
  let clock: ManualClock;
  let cache: ListCache;
  let calls: number;
  const compute = (value: number) => async () => {
    calls += 1;
    return value;
  };
  const large = (value: number) => value >= 100;

  beforeEach(() => {
    clock = new ManualClock();
    cache = new ListCache(clock, { ttlMs: 30_000, maxEntries: 2 });
    calls = 0;
  });

  it('keeps only the values the caller marks, until they expire', async () => {
    expect(await cache.get('small', compute(5), large)).toBe(5);
    expect(await cache.get('small', compute(6), large)).toBe(6);
    expect(cache.has('small')).toBe(false);

    expect(await cache.get('big', compute(500), large)).toBe(500);
    expect(await cache.get('big', compute(501), large)).toBe(500);
    expect(cache.has('big')).toBe(true);
    clock.current += 30_000;
    expect(cache.has('big')).toBe(false);
    expect(await cache.get('big', compute(502), large)).toBe(502);
    expect(calls).toBe(4);
  });

  it('runs one computation for concurrent misses of a key, also for values it does not keep', async () => {
    let release!: (value: number) => void;
    const slow = () => {
      calls += 1;
      return new Promise<number>((resolve) => (release = resolve));
    };
    const first = cache.get('key', slow, large);
    const second = cache.get('key', slow, large);
    release(7);
    expect(await Promise.all([first, second])).toEqual([7, 7]);
    expect(calls).toBe(1);
    expect(await cache.get('key', compute(8), large)).toBe(8);
  });

  it('does not keep a failure', async () => {
    await expect(cache.get('key', () => Promise.reject(new Error('down')), large)).rejects.toThrow(
      'down',
    );
    expect(await cache.get('key', compute(100), large)).toBe(100);
  });

  it('drops the oldest entries beyond maxEntries', async () => {
    await cache.get('a', compute(100), large);
    await cache.get('b', compute(200), large);
    await cache.get('c', compute(300), large);
    expect([cache.has('a'), cache.has('b'), cache.has('c')]).toEqual([false, true, true]);
  });

  it('serves a value it was given as one it computed, until it expires, within maxEntries', async () => {
    cache.set('page\u0000a', [1, 2]);
    expect(await cache.get('page\u0000a', compute(3), large)).toEqual([1, 2]);
    expect(calls).toBe(0);
    clock.current += 30_000;
    expect(await cache.get('page\u0000a', compute(3), () => false)).toBe(3);
    cache.set('b', 1);
    cache.set('c', 2);
    cache.set('d', 3);
    expect([cache.has('b'), cache.has('c'), cache.has('d')]).toEqual([false, true, true]);
    expect(cache.stats()).toEqual({ page: { hits: 1, shared: 0, misses: 1 } });
  });

  it('counts hits, shared queries and misses per kind of key', async () => {
    await cache.get('count\u0000a', compute(500), large);
    await cache.get('count\u0000a', compute(500), large);
    await Promise.all([
      cache.get('page\u0000b', compute(1), large),
      cache.get('page\u0000b', compute(1), large),
    ]);
    expect(cache.stats()).toEqual({
      count: { hits: 1, shared: 0, misses: 1 },
      page: { hits: 0, shared: 1, misses: 1 },
    });
    // A copy: the caller cannot change the counters.
    cache.stats().count.hits = 99;
    expect(cache.stats().count.hits).toBe(1);
  });
});
