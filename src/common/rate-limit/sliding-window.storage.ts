import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { RedisBreaker } from '../redis/redis-breaker.js';

/** What throttler's guard reads back (its index does not export the record's own name). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

export interface RateLimitResult {
  /** Requests counted in the window, this one included when it was allowed. */
  totalHits: number;
  isBlocked: boolean;
  /** Whole seconds until the oldest counted request leaves the window (≥ 1 when blocked, else 0). */
  retryAfterSeconds: number;
}

/**
 * Counts requests per key over a sliding window. A refused request is never counted.
 *
 * It is @nestjs/throttler's `ThrottlerStorage` (the guard calls `increment`), with the semantics throttler's own
 * in-memory storage has for `blockDuration: 0`: a request is refused while `limit` younger ones exist, and nothing
 * else. A penalty block (`blockDuration > 0`) is not implemented and refused, so it cannot be switched on unnoticed.
 */
export abstract class RateLimitStorage implements ThrottlerStorage {
  abstract hit(key: string, windowMs: number, limit: number): Promise<RateLimitResult>;

  /** ThrottlerStorage: `ttl` in milliseconds; the record's times in whole seconds, as throttler's own storage. */
  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    _throttlerName?: string,
  ): Promise<ThrottlerStorageRecord> {
    if (blockDuration !== 0) {
      throw new Error(`RateLimitStorage is a pure sliding window: blockDuration must be 0`);
    }
    const result = await this.hit(key, ttl, limit);
    return {
      totalHits: result.totalHits,
      isBlocked: result.isBlocked,
      // An allowed request is counted for one whole window; a refused one waits for the oldest counted request.
      timeToExpire: result.isBlocked ? result.retryAfterSeconds : Math.ceil(ttl / 1000),
      timeToBlockExpire: result.retryAfterSeconds,
    };
  }

  close(): void {}
}

function toSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * A sliding log in process memory: each allowed request is remembered with its time and counts until it is
 * `windowMs` old; a request is refused while `limit` younger ones exist.
 */
export class MemorySlidingWindowStorage extends RateLimitStorage {
  private readonly hits = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly clock: Clock,
    private readonly maxWindowMs = 86_400_000,
  ) {
    super();
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  hit(key: string, windowMs: number, limit: number): Promise<RateLimitResult> {
    return Promise.resolve(this.hitNow(key, windowMs, limit));
  }

  private hitNow(key: string, windowMs: number, limit: number): RateLimitResult {
    const now = this.clock.now();
    const live = (this.hits.get(key) ?? []).filter((at) => now - at < windowMs);
    if (live.length >= limit) {
      this.hits.set(key, live);
      return {
        totalHits: live.length,
        isBlocked: true,
        retryAfterSeconds: toSeconds(live[0] + windowMs - now),
      };
    }
    live.push(now);
    this.hits.set(key, live);
    return { totalHits: live.length, isBlocked: false, retryAfterSeconds: 0 };
  }

  /** Drops keys whose newest request has aged out, so idle clients cost no memory. */
  sweep(): void {
    const now = this.clock.now();
    for (const [key, hits] of this.hits) {
      if (!hits.length || now - hits[hits.length - 1] >= this.maxWindowMs) this.hits.delete(key);
    }
  }

  size(): number {
    return this.hits.size;
  }

  override close(): void {
    clearInterval(this.sweeper);
  }
}

/** The same sliding log in a Redis sorted set, changed atomically by one script, shared by every instance. */
export const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local blocked = 1
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  count = count + 1
  blocked = 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {count, blocked, tonumber(oldest[2]) + window - now}
`;

type SlidingWindowRedis = Redis & {
  slidingWindowHit(
    key: string,
    now: number,
    windowMs: number,
    limit: number,
    member: string,
  ): Promise<[number, number, number]>;
};

/**
 * With a breaker, a Redis that fails or is slow hands the count to `fallback` (the in-process window) until it
 * answers again: limits then apply per instance instead of not at all.
 */
export class RedisSlidingWindowStorage extends RateLimitStorage {
  private readonly redis: SlidingWindowRedis;

  constructor(
    redis: Redis,
    private readonly clock: Clock,
    private readonly prefix: string,
    private readonly breaker?: RedisBreaker,
    private readonly fallback?: RateLimitStorage,
  ) {
    super();
    if (!('slidingWindowHit' in redis)) {
      redis.defineCommand('slidingWindowHit', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
    }
    this.redis = redis as SlidingWindowRedis;
  }

  hit(key: string, windowMs: number, limit: number): Promise<RateLimitResult> {
    if (!this.breaker || !this.fallback) return this.redisHit(key, windowMs, limit);
    const fallback = this.fallback;
    return this.breaker.run(
      () => this.redisHit(key, windowMs, limit),
      () => fallback.hit(key, windowMs, limit),
    );
  }

  override close(): void {
    this.fallback?.close();
  }

  private async redisHit(key: string, windowMs: number, limit: number): Promise<RateLimitResult> {
    const now = this.clock.now();
    const [count, blocked, waitMs] = await this.redis.slidingWindowHit(
      this.prefix + key,
      now,
      windowMs,
      limit,
      `${now}:${randomUUID()}`,
    );
    const isBlocked = blocked === 1;
    return { totalHits: count, isBlocked, retryAfterSeconds: isBlocked ? toSeconds(waitMs) : 0 };
  }
}
