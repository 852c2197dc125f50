import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../../config/app-config.js';
import { RedisBreaker } from './redis-breaker.js';

export const REDIS = Symbol('REDIS');

/** Null when REDIS_URL is unset: every user of it must have an in-process path. */
export type RedisClient = Redis | null;

/**
 * Short timeouts everywhere: a command that waits (offline queue, paused server) fails after `commandTimeoutMs`
 * and its caller takes the fallback; reconnection retries forever with a capped back-off.
 */
export function createRedisClient(url: string, commandTimeoutMs = 200): Redis {
  return new Redis(url, {
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(1000, commandTimeoutMs * 5),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
}

class RedisLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly breaker: RedisBreaker,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    this.breaker.shutdown();
    if (!this.redis) return;
    // QUIT waits for an answer a stopped server never sends.
    const quit = this.redis.quit().catch(() => undefined);
    const timeout = new Promise((resolve) => setTimeout(resolve, 500).unref());
    await Promise.race([quit, timeout]);
    this.redis.disconnect();
  }
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig): RedisClient => {
        if (!config.redisUrl) return null;
        const client = createRedisClient(config.redisUrl, config.redisCommandTimeoutMs);
        // Connection errors are the breaker's business; unhandled 'error' events would be logged per retry.
        client.on('error', () => undefined);
        return client;
      },
    },
    {
      provide: RedisBreaker,
      inject: [REDIS, AppConfig],
      useFactory: (redis: RedisClient, config: AppConfig) =>
        new RedisBreaker(redis, {
          timeoutMs: config.redisCommandTimeoutMs,
          retryAfterMs: config.redisRetryAfterMs,
        }),
    },
    RedisLifecycle,
  ],
  exports: [REDIS, RedisBreaker],
})
export class RedisModule {}
