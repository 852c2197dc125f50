import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import { CommonModule } from './common/common.module.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { CacheControlInterceptor } from './common/http/cache-control.js';
import { BodyParseErrorGuard } from './common/http/deferred-body-parser.js';
import { LoggingModule } from './common/logging/logging.module.js';
import { MediaModule } from './common/media/media.module.js';
import { MediaSweepModule } from './common/media/media-sweep.module.js';
import { RATE_LIMIT_GUARD, RateLimitModule } from './common/rate-limit/rate-limit.module.js';
import { RedisModule } from './common/redis/redis.module.js';
import { ApiValidationPipe } from './common/validation/validation.pipe.js';
import { AuthModule, JWT_AUTH_GUARD, STAFF_GUARD } from './auth/auth.module.js';
import { AdminModule } from './admin/admin.module.js';
import { AppConfig } from './config/app-config.js';
import { BenchModule } from './bench/bench.module.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EnrichmentModule } from './enrichment/enrichment.module.js';
import { ExportModule } from './export/export.module.js';
import { CommunityPhotosModule } from './community-photos/community-photos.module.js';
import { FavouritesModule } from './favourites/favourites.module.js';
import { HealthModule } from './health/health.module.js';
import { ModerationModule } from './moderation/moderation.module.js';
import { StatisticsModule } from './statistics/statistics.module.js';
import { LibrariesModule } from './libraries/libraries.module.js';
import { LibraryDetailModule } from './libraries/library-detail.module.js';
import { MapContributionModule } from './map-contribution/map-contribution.module.js';
import { IdempotencyModule } from './common/idempotency/idempotency.module.js';
import { MapModule } from './map/map.module.js';
import { ReportsModule } from './reports/reports.module.js';
import { PasswordResetModule } from './password-reset/password-reset.module.js';
import { UsersModule } from './users/users.module.js';

export interface AppModuleOptions {
  config: AppConfig;
  /** The database to use: DATABASE_URL, or the embedded server's loopback URL. */
  databaseUrl: string;
  runMigrations?: boolean;
  logDestination?: DestinationStream;
}

@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(options.config),
        CommonModule,
        LoggingModule.forRoot(options.logDestination),
        DatabaseModule.forRoot(
          options.databaseUrl,
          options.config.database.poolSize,
          options.runMigrations ?? true,
          options.config.database,
        ),
        RedisModule,
        RateLimitModule,
        MediaModule,
        MediaSweepModule,
        IdempotencyModule,
        HealthModule,
        UsersModule,
        AuthModule,
        PasswordResetModule,
        EnrichmentModule,
        // Modules with literal /libraries/… routes come before LibraryDetailModule, whose /libraries/{slug}
        // would otherwise swallow them (routes are matched in registration order).
        CommunityPhotosModule,
        FavouritesModule,
        ModerationModule,
        ReportsModule,
        ExportModule.forRoot(),
        LibrariesModule,
        MapModule,
        LibraryDetailModule,
        StatisticsModule,
        MapContributionModule,
        AdminModule,
        ...(options.config.benchCeilingRoute ? [BenchModule] : []),
      ],
      providers: [
        // Guards run in this order: rate limit first, so an over-limit request is refused before anything else.
        RATE_LIMIT_GUARD,
        { provide: APP_GUARD, useClass: BodyParseErrorGuard },
        JWT_AUTH_GUARD,
        STAFF_GUARD,
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_INTERCEPTOR, useClass: CacheControlInterceptor },
      ],
    };
  }
}
