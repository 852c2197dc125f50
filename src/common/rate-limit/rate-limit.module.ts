import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule, Reflector } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config.js';
import { Clock } from '../clock.js';
import { REDIS, type RedisClient } from '../redis/redis.module.js';
import { RateLimitGuard, throttlerOptions } from './rate-limit.guard.js';
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

/** The sliding-window storage: in process by default, in Redis when REDIS_URL is set. */
@Module({
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
  ],
  exports: [RateLimitStorage],
})
export class RateLimitStorageModule {}

/** Sliding-window rate limits per client IP through @nestjs/throttler, on the storage above. */
@Module({
  imports: [
    DiscoveryModule,
    RateLimitStorageModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [AppConfig, Reflector, RateLimitStorage],
      useFactory: throttlerOptions,
    }),
  ],
  providers: [RateLimitRouteAudit, RateLimitGuard],
  exports: [RateLimitStorageModule, RateLimitGuard],
})
export class RateLimitModule {}

/** AppModule registers this first among the global guards. */
export const RATE_LIMIT_GUARD = { provide: APP_GUARD, useExisting: RateLimitGuard };
