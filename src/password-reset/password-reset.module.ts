import { Module } from '@nestjs/common';
import { RateLimitStorageModule } from '../common/rate-limit/rate-limit.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasswordResetTokensRepository } from './password-reset-tokens.repository.js';
import { PasswordResetController } from './password-reset.controller.js';
import { PasswordResetService } from './password-reset.service.js';
import { ResetPasswordPage } from './reset-password-page.js';
import { ResetPasswordPageController } from './reset-password-page.controller.js';

/** Password reset by email: the API, the page the mail links to, and the link's mail (issue 20). */
@Module({
  imports: [UsersModule, NotificationsModule, RateLimitStorageModule],
  controllers: [PasswordResetController, ResetPasswordPageController],
  providers: [PasswordResetService, PasswordResetTokensRepository, ResetPasswordPage],
})
export class PasswordResetModule {}
