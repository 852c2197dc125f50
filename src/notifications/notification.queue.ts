import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { Transaction } from '../database/database.js';
import type { DecisionPayload, NotificationKind } from './notification-kinds.js';
import { NotificationJobsRepository } from './notification-jobs.repository.js';
import { NOTIFICATIONS_OPTIONS, type NotificationsOptions } from './notifications.options.js';

/**
 * Where events queue their outbound messages. Every method runs inside the caller's transaction, so a message
 * exists exactly when its event was committed; the worker sends it later (NotificationsWorker).
 */
@Injectable()
export class NotificationQueue {
  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly jobs: NotificationJobsRepository,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: NotificationsOptions,
  ) {}

  /**
   * A reset was asked for this address. The same single insert whether or not an account uses it (so the answer
   * takes the same time either way); the worker looks the account up, makes the token and sends the link.
   */
  async passwordResetRequested(tx: Transaction, email: string): Promise<void> {
    await this.jobs.insertEmail(
      tx,
      { kind: 'password_reset', userId: null, recipient: email, payload: {} },
      this.clock.date(),
    );
  }

  /** A notice to the address the account had before (always sent: it is how a hijack is noticed). */
  async emailChanged(
    tx: Transaction,
    user: { id: number; username: string },
    oldEmail: string,
    newEmail: string,
  ): Promise<void> {
    if (!oldEmail) return;
    await this.jobs.insertEmail(
      tx,
      {
        kind: 'email_changed',
        userId: user.id,
        recipient: oldEmail,
        payload: { username: user.username, new_email: maskEmail(newEmail) },
      },
      this.clock.date(),
    );
  }

  /** A notice that the password was changed (in the account, or by a reset link). */
  async passwordChanged(
    tx: Transaction,
    user: { id: number; username: string; email: string },
    how: 'changed' | 'reset',
  ): Promise<void> {
    if (!user.email) return;
    await this.jobs.insertEmail(
      tx,
      {
        kind: 'password_changed',
        userId: user.id,
        recipient: user.email,
        payload: { username: user.username, how },
      },
      this.clock.date(),
    );
  }

  /** The submitter of a library (or a community photo) learns staff's decision, by email and push. */
  async decision(
    tx: Transaction,
    userId: number | null,
    kind: Extract<
      NotificationKind,
      'library_approved' | 'library_rejected' | 'photo_approved' | 'photo_rejected'
    >,
    payload: DecisionPayload,
  ): Promise<void> {
    if (userId === null) return;
    await this.jobs.insertUserNotice(
      tx,
      userId,
      kind,
      { ...payload },
      { email: true, push: this.config.apns !== null },
      this.clock.date(),
    );
  }

  /** New work for moderators (a submission, a staged edit, a report, a community photo). */
  async moderationWork(tx: Transaction, causedBy: number | null): Promise<void> {
    if (this.config.apns === null) return;
    await this.jobs.insertStaffWork(tx, causedBy, this.options.staffCollapseMs, this.clock.date());
  }
}

/** `jane.doe@example.org` → `j•••@example.org`: enough to recognise, not to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${email[0]}•••${email.slice(at)}`;
}
