import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { Clock } from '../common/clock.js';
import { RedisBreaker } from '../common/redis/redis-breaker.js';
import { AppConfig } from '../config/app-config.js';
import { UsersModule } from '../users/users.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { NotificationSettingsController } from './notification-settings.controller.js';
import { NotificationSettingsService } from './notification-settings.service.js';
import { AccountService } from './account.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { DeviceTokensRepository } from './device-tokens.repository.js';
import { DevicesController } from './devices.controller.js';
import { DevicesService } from './devices.service.js';
import { JwtAuthGuard } from './guards/jwt-auth.guard.js';
import { StaffGuard } from './guards/staff.guard.js';
import {
  DatabaseIdentityTokenReplayStore,
  IdentityTokenReplayStore,
  RedisIdentityTokenReplayStore,
} from './identity-token-replay.store.js';
import { IdentityTokenVerifier } from './identity-token.verifier.js';
import { StaffRequestIdentity } from '../common/rate-limit/rate-limit.guard.js';
import { JwtStaffRequestIdentity } from './staff-request-identity.js';
import { JwtStrategy } from './jwt.strategy.js';
import { SessionChecks } from './session-checks.js';
import { SessionsRepository } from './sessions.repository.js';
import { SocialAuthService } from './social-auth.service.js';
import { SocialIdentitiesRepository } from './social-identities.repository.js';
import { TokensService, JWT_ALGORITHM, jwtKey } from './tokens.service.js';

@Module({
  imports: [
    UsersModule,
    NotificationsModule,
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        secret: jwtKey(config.jwt.secret),
        signOptions: { algorithm: JWT_ALGORITHM },
        verifyOptions: { algorithms: [JWT_ALGORITHM] },
      }),
    }),
  ],
  controllers: [AuthController, DevicesController, NotificationSettingsController],
  providers: [
    AuthService,
    AccountService,
    SocialAuthService,
    DevicesService,
    NotificationSettingsService,
    TokensService,
    SessionsRepository,
    SessionChecks,
    SocialIdentitiesRepository,
    DeviceTokensRepository,
    IdentityTokenVerifier,
    JwtStrategy,
    JwtAuthGuard,
    { provide: StaffRequestIdentity, useClass: JwtStaffRequestIdentity },
    StaffGuard,
    DatabaseIdentityTokenReplayStore,
    {
      // Redis when configured (shared by every instance), else (and while Redis fails) the database table.
      provide: IdentityTokenReplayStore,
      inject: [RedisBreaker, AppConfig, Clock, DatabaseIdentityTokenReplayStore],
      useFactory: (
        breaker: RedisBreaker,
        config: AppConfig,
        clock: Clock,
        database: DatabaseIdentityTokenReplayStore,
      ) =>
        breaker.state === 'off'
          ? database
          : new RedisIdentityTokenReplayStore(
              breaker,
              database,
              clock,
              `${config.redisKeyPrefix}social-jti:`,
            ),
    },
  ],
  exports: [JwtAuthGuard, StaffGuard, TokensService, SessionsRepository, AuthService],
})
export class AuthModule {}

/** AppModule registers these after RATE_LIMIT_GUARD: rate limit, then authentication, then the staff check. */
export const JWT_AUTH_GUARD = { provide: APP_GUARD, useExisting: JwtAuthGuard };
export const STAFF_GUARD = { provide: APP_GUARD, useExisting: StaffGuard };
