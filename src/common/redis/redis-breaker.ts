import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import CircuitBreaker from 'opossum';

export interface RedisBreakerOptions {
  /** A command slower than this counts as a failure and the caller takes its fallback. */
  timeoutMs: number;
  /** How long the circuit stays open before one call tries Redis again (half-open). */
  retryAfterMs: number;
}

/** `up`: Redis answers; `degraded`: configured but failing, callers use their fallbacks; `off`: not configured. */
export type RedisState = 'up' | 'degraded' | 'off';

type Operation = (redis: Redis) => Promise<unknown>;

/**
 * The one door to Redis. Redis is an accelerator, never a single point of failure: every use goes through `run`
 * with a fallback (the in-process rate limit, a direct computation, the database), taken when Redis is not
 * configured, when the command fails or takes longer than `timeoutMs`, and, without even trying, while the circuit
 * is open after recent failures. One call in `retryAfterMs` tries Redis again; its success closes the circuit.
 * The circuit is opossum's (errors counted over a rolling second); the transitions are logged once each.
 */
export class RedisBreaker {
  private readonly logger = new Logger('Redis');
  private readonly breaker: CircuitBreaker<[Operation, Redis], unknown> | null;
  private degraded = false;

  constructor(
    private readonly redis: Redis | null,
    options: RedisBreakerOptions,
  ) {
    if (!redis) {
      this.breaker = null;
      return;
    }
    this.breaker = new CircuitBreaker((operation: Operation, client: Redis) => operation(client), {
      timeout: options.timeoutMs,
      resetTimeout: options.retryAfterMs,
      errorThresholdPercentage: 50,
      volumeThreshold: 1,
      rollingCountTimeout: 1000,
      rollingCountBuckets: 10,
    });
    this.breaker.on('open', () => this.markDegraded());
    this.breaker.on('success', () => {
      if (!this.degraded || this.breaker?.opened) return;
      this.degraded = false;
      this.logger.log('Redis answers again: shared state and caches are back in Redis');
    });
  }

  get state(): RedisState {
    if (!this.breaker) return 'off';
    return this.degraded || this.breaker.opened ? 'degraded' : 'up';
  }

  /** Runs `operation` on Redis, or `fallback` when Redis is off, open, failing or slow. */
  async run<T>(
    operation: (redis: Redis) => Promise<T>,
    fallback: () => Promise<T> | T,
  ): Promise<T> {
    if (!this.breaker || !this.redis) return fallback();
    let result: T;
    try {
      result = (await this.breaker.fire(operation, this.redis)) as T;
    } catch {
      // A failure of the operation itself (not only an open circuit) also marks the degradation at once.
      if (!this.breaker.opened) this.markDegraded();
      return fallback();
    }
    return result;
  }

  /** A PING through the circuit, for readiness. */
  async ping(): Promise<RedisState> {
    if (!this.breaker) return 'off';
    const pong = await this.run(
      (redis) => redis.ping(),
      () => null,
    );
    return pong === 'PONG' ? 'up' : 'degraded';
  }

  shutdown(): void {
    this.breaker?.shutdown();
  }

  private markDegraded(): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn(
      'Redis is unreachable or slow: rate limits, caches and the replay guard fall back until it answers again',
    );
  }
}
