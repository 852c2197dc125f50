import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ModerationModule } from '../moderation/moderation.module.js';
import { StatisticsModule } from '../statistics/statistics.module.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsolePages } from './console-pages.js';
import { ConsoleSessionGuard } from './console-session.guard.js';
import { ConsoleSessionRepository } from './console-session.repository.js';
import { ConsoleSessionService } from './console-session.service.js';
import { ConsoleSignInController } from './console-sign-in.controller.js';
import { ConsoleController } from './console.controller.js';
import { SignInCsrfGuard } from './sign-in-csrf.guard.js';

/**
 * The staff console: server-rendered pages under /admin with cookie sessions. Its moderation pages live here; the
 * map-contribution pages live in that module and use the session guard, renderer and error filter exported here.
 */
@Module({
  imports: [AuthModule, ModerationModule, StatisticsModule],
  controllers: [ConsoleSignInController, ConsoleController],
  providers: [
    ConsoleSessionRepository,
    ConsoleSessionService,
    ConsolePages,
    ConsoleSessionGuard,
    ConsoleExceptionFilter,
    SignInCsrfGuard,
  ],
  exports: [ConsoleSessionService, ConsolePages, ConsoleSessionGuard, ConsoleExceptionFilter],
})
export class AdminModule {}

/** Console paths served without the API prefix (the console's JSON counterparts stay under /api/v1/admin/…). */
export const CONSOLE_PATHS = [
  'admin',
  'admin/login',
  'admin/logout',
  'admin/libraries{/*path}',
  'admin/photos{/*path}',
  'admin/reports{/*path}',
  'admin/contributions{/*path}',
  'admin/contributions-batch',
  'admin/audit',
];
