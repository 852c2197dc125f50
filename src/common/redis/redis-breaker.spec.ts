import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import { RedisBreaker } from './redis-breaker.js';

/** Stands in for an ioredis client: each call answers, fails or never answers, as the test says. */
class FakeRedis {
  mode: 'up' | 'down' | 'frozen' = 'up';
  calls = 0;

  ping(): Promise<string> {
    this.calls += 1;
    if (this.mode === 'down') return Promise.reject(new Error('ECONNREFUSED'));
    if (this.mode === 'frozen') return new Promise(() => undefined);
    return Promise.resolve('PONG');
  }
}

describe('RedisBreaker', () => {
  let fake: FakeRedis;
  let breaker: RedisBreaker;

  beforeEach(() => {
    fake = new FakeRedis();
    breaker = new RedisBreaker(fake as unknown as Redis, { timeoutMs: 50, retryAfterMs: 100 });
  });

  afterEach(() => breaker.shutdown());

  const ping = () =>
    breaker.run(
      (redis) => redis.ping(),
      () => 'fallback',
    );

  it('without Redis: always the fallback, state off', async () => {
    const off = new RedisBreaker(null, { timeoutMs: 50, retryAfterMs: 100 });
    expect(
      await off.run(
        async () => 'redis',
        () => 'fallback',
      ),
    ).toBe('fallback');
    expect(off.state).toBe('off');
  });

  it('Redis answering: its result, state up', async () => {
    expect(await ping()).toBe('PONG');
    expect(breaker.state).toBe('up');
  });

  it('a failure: the fallback, and the circuit opens (no further calls reach Redis)', async () => {
    fake.mode = 'down';
    expect(await ping()).toBe('fallback');
    expect(breaker.state).toBe('degraded');
    const callsWhenOpen = fake.calls;
    for (let i = 0; i < 20; i += 1) expect(await ping()).toBe('fallback');
    expect(fake.calls).toBe(callsWhenOpen);
  });

  it('a frozen Redis: the fallback after the timeout, not a hang', async () => {
    fake.mode = 'frozen';
    const started = Date.now();
    expect(await ping()).toBe('fallback');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(breaker.state).toBe('degraded');
  });

  it('recovers by itself: after retryAfterMs one call tries Redis again and closes the circuit', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      fake.mode = 'down';
      await ping();
      fake.mode = 'up';
      expect(await ping()).toBe('fallback'); // still open
      jest.advanceTimersByTime(150);
      expect(await ping()).toBe('PONG');
    } finally {
      jest.useRealTimers();
    }
    expect(breaker.state).toBe('up');
    expect(await breaker.ping()).toBe('up');
  });
});
