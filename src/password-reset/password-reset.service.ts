import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { RefusedError, TooManyRequestsError } from '../common/errors/domain-errors.js';
import { RATE_LIMIT_MESSAGES } from '../common/rate-limit/rate-limit.guard.js';
import { RateLimitStorage } from '../common/rate-limit/sliding-window.storage.js';
import { AppConfig } from '../config/app-config.js';
import { isValidEmail, normalizeEmail } from '../auth/email.js';
import { checkPasswordPolicy } from '../auth/password-policy.js';
import { NotificationQueue } from '../notifications/notification.queue.js';
import type { ClaimedNotification } from '../notifications/notification-jobs.repository.js';
import {
  NotificationsWorker,
  type MailPreparation,
} from '../notifications/notifications.worker.js';
import {
  NOTIFICATIONS_OPTIONS,
  type NotificationsOptions,
} from '../notifications/notifications.options.js';
import { PasswordHasher } from '../users/password-hasher.js';
import type { PasswordResetConfirmDto } from './dto/password-reset.dto.js';
import type { PasswordResetMessageResponse } from './dto/password-reset.response.js';
import { PasswordResetTokensRepository } from './password-reset-tokens.repository.js';
import { RESET_MESSAGES } from './password-reset.messages.js';

/** Page path of the link in the mail (server-rendered, like the console). */
export const RESET_PAGE_PATH = '/reset-password';

export function hashResetToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A token as the link carries it: 32 random bytes, base64url (43 characters). */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Password reset by email: the request (always the same answer, one queued job either way), the link's token made
 * when the mail goes out (single use, 1 hour, stored hashed), and the new password under the password policy. A reset
 * ends every session of the account; a social-only account gets its first local password this way.
 */
@Injectable()
export class PasswordResetService implements OnModuleInit {
  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly tokens: PasswordResetTokensRepository,
    private readonly queue: NotificationQueue,
    private readonly worker: NotificationsWorker,
    private readonly hasher: PasswordHasher,
    private readonly rateLimits: RateLimitStorage,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: NotificationsOptions,
  ) {}

  onModuleInit(): void {
    this.worker.registerPreparer('password_reset', (job, now) => this.prepareMail(job, now));
  }

  /**
   * Queues the request. Nothing here depends on whether an account uses the address: the same validation, the same
   * per-address counter and the same single insert, so neither the answer nor its timing tells.
   */
  async request(rawEmail: string): Promise<PasswordResetMessageResponse> {
    const email = normalizeEmail(rawEmail);
    if (!isValidEmail(email)) throw new RefusedError(RESET_MESSAGES.invalidEmail);
    await this.countPerAddress(email);
    await this.tokens.transaction((tx) => this.queue.passwordResetRequested(tx, email));
    return { message: RESET_MESSAGES.requested, details: null };
  }

  /** The per-address limit (RATE_LIMIT_PASSWORD_RESET per window), next to the per-IP one of the route. */
  private async countPerAddress(email: string): Promise<void> {
    if (!this.config.rateLimit.enabled) return;
    const key = `password-reset-email:${createHash('sha256').update(email).digest('hex')}`;
    const record = await this.rateLimits.increment(
      key,
      this.config.rateLimit.windowSeconds * 1000,
      this.config.rateLimit.limits.password_reset,
      0,
      'tier',
    );
    if (record.isBlocked) {
      throw new TooManyRequestsError(RATE_LIMIT_MESSAGES.password_reset, {
        retry_after: record.timeToBlockExpire,
      });
    }
  }

  /** Called by the notification worker when the mail goes out: finds the account and makes the link. */
  async prepareMail(job: ClaimedNotification, now: Date): Promise<MailPreparation> {
    if (now.getTime() - job.createdAt.getTime() > this.options.resetTokenTtlMs) {
      return { skip: 'request expired before it could be sent' };
    }
    const account = await this.tokens.findAccountByEmail(job.recipient ?? '');
    if (!account) return { skip: 'no account uses this address' };
    const token = randomBytes(32).toString('base64url');
    await this.tokens.issue(
      account.id,
      job.id,
      hashResetToken(token),
      now,
      new Date(now.getTime() + this.options.resetTokenTtlMs),
    );
    const link = `${this.config.mail.publicBaseUrl}${RESET_PAGE_PATH}?token=${token}`;
    return { data: { username: account.username, link }, to: account.email, links: [link] };
  }

  /** Whether the link's token can still be used (the page shows its form only then). */
  async isUsable(token: string): Promise<boolean> {
    if (!TOKEN_FORMAT.test(token)) return false;
    return this.tokens.isUsable(hashResetToken(token), this.clock.date());
  }

  /** Sets the new password; the token and every other open token of the account are used up. */
  async confirm(dto: PasswordResetConfirmDto): Promise<PasswordResetMessageResponse> {
    if (!TOKEN_FORMAT.test(dto.token)) throw new RefusedError(RESET_MESSAGES.invalidLink);
    const now = this.clock.date();
    // Checked before hashing (argon2 is slow) and again under the row lock.
    if (!(await this.tokens.isUsable(hashResetToken(dto.token), now))) {
      throw new RefusedError(RESET_MESSAGES.invalidLink);
    }
    if (dto.new_password !== dto.new_password_confirm) {
      throw new RefusedError(RESET_MESSAGES.passwordsDoNotMatch);
    }
    const account = await this.tokens.transaction((tx) =>
      this.tokens.findForUpdate(hashResetToken(dto.token), tx),
    );
    if (!account) throw new RefusedError(RESET_MESSAGES.invalidLink);
    const violation = checkPasswordPolicy(dto.new_password, {
      username: account.username,
      email: account.email,
    });
    if (violation) throw new RefusedError(violation);
    const passwordHash = await this.hasher.hash(dto.new_password);
    await this.tokens.transaction(async (tx) => {
      const held = await this.tokens.findForUpdate(hashResetToken(dto.token), tx);
      const at = this.clock.date();
      if (!held || held.usedAt !== null || held.expiresAt <= at || !held.userActive) {
        throw new RefusedError(RESET_MESSAGES.invalidLink);
      }
      await this.tokens.setPassword(held.userId, passwordHash, tx);
      await this.tokens.useAll(held.userId, at, tx);
      await this.tokens.revokeAllSessions(held.userId, at, tx);
      await this.queue.passwordChanged(
        tx,
        { id: held.userId, username: held.username, email: held.email },
        'reset',
      );
    });
    return { message: RESET_MESSAGES.done, details: null };
  }
}
