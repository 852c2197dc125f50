import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../../config/app-config.js';
import { Clock } from '../clock.js';
import { REDIS, type RedisClient } from '../redis/redis.module.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RateLimitRouteAudit } from './rate-limit-route-audit.js';
import {
  MemorySlidingWindowStorage,
  RateLimitStorage,
  RedisSlidingWindowStorage,
} from './sliding-window.storage.js';

class StorageLifecycle implements OnApplicationShutdown {
  constructor(private readonly storage: RateLimitStorage) {}

  onApplicationShutdown(): void {
    this.storage.close();
  }
}

/** Sliding-window rate limits per client IP: in process by default, in Redis when REDIS_URL is set. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: RateLimitStorage,
      inject: [AppConfig, Clock, REDIS],
      useFactory: (config: AppConfig, clock: Clock, redis: RedisClient) =>
        redis
          ? new RedisSlidingWindowStorage(redis, clock, `${config.redisKeyPrefix}ratelimit:`)
          : new MemorySlidingWindowStorage(clock, config.rateLimit.windowSeconds * 1000),
    },
    {
      provide: StorageLifecycle,
      inject: [RateLimitStorage],
      useFactory: (s: RateLimitStorage) => new StorageLifecycle(s),
    },
    RateLimitRouteAudit,
    RateLimitGuard,
  ],
  exports: [RateLimitStorage, RateLimitGuard],
})
export class RateLimitModule {}

/** AppModule registers this first among the global guards. */
export const RATE_LIMIT_GUARD = { provide: APP_GUARD, useExisting: RateLimitGuard };
