import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { PollingWorker } from '../common/jobs/polling-worker.js';
import { AppConfig } from '../config/app-config.js';
import { MailTemplates, type MailKind } from './mail/mail-templates.js';
import { MailTransport, PermanentMailError } from './mail/mail-transport.js';
import { SECURITY_KINDS, type NotificationKind } from './notification-kinds.js';
import {
  NotificationJobsRepository,
  type ClaimedNotification,
} from './notification-jobs.repository.js';
import { NOTIFICATIONS_OPTIONS, type NotificationsOptions } from './notifications.options.js';
import { ApnsClient } from './push/apns.client.js';
import { pushPayload } from './push/push-messages.js';

export type NotificationOutcome = 'sent' | 'skipped' | 'retry' | 'failed' | 'lost' | 'released';

/** What a mail needs beyond its job's payload, found at send time (the reset link is made then). */
export type MailPreparation =
  { data: Record<string, unknown>; to?: string; links?: string[] } | { skip: string };

export type MailPreparer = (job: ClaimedNotification, now: Date) => Promise<MailPreparation>;

/** A stable UUID-shaped id per job: the same `apns-id` and Message-ID on every try. */
export function jobUuid(jobId: number): string {
  const hex = createHash('sha256').update(`notification-job:${jobId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Sends the queued emails and pushes: claims due jobs (SKIP LOCKED, with a lease), sends each once per claim and
 * records the outcome; failures that may pass (SMTP 4xx or no answer, APNs 429/5xx) are tried again with backoff.
 * On shutdown it finishes the sends in flight and claims nothing more; a claim not yet sent is given back. A worker
 * that dies leaves its job to others when the lease expires.
 */
@Injectable()
export class NotificationsWorker extends PollingWorker {
  private readonly preparers = new Map<NotificationKind, MailPreparer>();
  private stopping = false;

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly jobs: NotificationJobsRepository,
    private readonly templates: MailTemplates,
    private readonly mail: MailTransport,
    private readonly apns: ApnsClient,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: NotificationsOptions,
  ) {
    super(
      { pollIntervalMs: config.notifications.pollIntervalMs ?? 0, autoStart: options.autoStart },
      'notification poll failed',
    );
  }

  /** A kind whose mail needs data made at send time (the password reset link). */
  registerPreparer(kind: NotificationKind, preparer: MailPreparer): void {
    this.preparers.set(kind, preparer);
  }

  protected configured(): boolean {
    return this.config.notifications.pollIntervalMs !== null;
  }

  protected override beforeStop(): void {
    this.stopping = true;
  }

  /** Sends what is due now (at most `maxJobsPerRun`); resolves to how many jobs were claimed. */
  runOnce(): Promise<number> {
    return this.track(this.drain());
  }

  private async drain(): Promise<number> {
    if (this.stopping) return 0;
    const now = this.clock.date();
    await this.jobs.requeueExpiredLeases(now, this.options.maxAttempts);
    await this.jobs.purgeFinished(new Date(now.getTime() - this.options.retentionMs));
    let claimed = 0;
    while (claimed < this.options.maxJobsPerRun && !this.stopping) {
      const at = this.clock.now();
      const job = await this.jobs.claimNext(new Date(at), new Date(at + this.options.leaseMs));
      if (!job) break;
      claimed += 1;
      await this.process(job);
    }
    return claimed;
  }

  private async process(job: ClaimedNotification): Promise<NotificationOutcome> {
    if (this.stopping) {
      await this.jobs.release(job, this.clock.date());
      return 'released';
    }
    try {
      return job.channel === 'email' ? await this.sendEmail(job) : await this.sendPush(job);
    } catch (error) {
      if (error instanceof PermanentMailError) return this.finish(job, 'failed', error.message);
      this.logger.warn(`notification job ${job.id} (${job.kind}): ${(error as Error).message}`);
      return this.retry(job, errorCategory(error));
    }
  }

  private async sendEmail(job: ClaimedNotification): Promise<NotificationOutcome> {
    if (!SECURITY_KINDS.includes(job.kind) && job.userId !== null) {
      const state = await this.jobs.findEmailRecipientState(job.userId);
      if (!state?.isActive) return this.finish(job, 'skipped', 'account gone');
      if (!state.notifyEmail) return this.finish(job, 'skipped', 'email notices off');
    }
    const preparer = this.preparers.get(job.kind);
    const prepared: MailPreparation = preparer
      ? await preparer(job, this.clock.date())
      : { data: job.payload };
    if ('skip' in prepared) return this.finish(job, 'skipped', prepared.skip);
    const rendered = this.templates.render(job.kind as MailKind, prepared.data);
    await this.mail.send({
      to: prepared.to ?? job.recipient!,
      ...rendered,
      messageId: `<${jobUuid(job.id)}@${new URL(this.config.mail.publicBaseUrl).hostname}>`,
      links: prepared.links,
    });
    return this.finish(job, 'sent', '');
  }

  private async sendPush(job: ClaimedNotification): Promise<NotificationOutcome> {
    if (!this.apns.configured) return this.finish(job, 'skipped', 'push not configured');
    const target = await this.jobs.findPushTarget(job.deviceTokenId!);
    if (!target || !target.isActive) return this.finish(job, 'skipped', 'device inactive');
    if (!target.notifyPush) return this.finish(job, 'skipped', 'push notices off');
    const data =
      job.kind === 'moderation_work'
        ? { pending: await this.jobs.pendingModerationCount() }
        : job.payload;
    const outcome = await this.apns.send(
      target,
      {
        payload: pushPayload(job.kind, data),
        id: jobUuid(job.id),
        // A duplicate delivery (outcome of a try unknown, then retried) replaces the first on the device.
        collapseId: job.kind === 'moderation_work' ? 'moderation_work' : `job-${job.id}`,
        expiration: Math.floor(this.clock.now() / 1000) + 24 * 3600,
      },
      this.options.sendTimeoutMs,
    );
    switch (outcome.result) {
      case 'sent':
        return this.finish(job, 'sent', '');
      case 'dead_token':
        await this.jobs.deactivateDevice(job.deviceTokenId!, this.clock.date());
        this.logger.log(`device ${job.deviceTokenId} deactivated (${outcome.reason})`);
        return this.finish(job, 'skipped', outcome.reason);
      case 'rejected':
        this.logger.error(`notification job ${job.id}: APNs refused it (${outcome.reason})`);
        return this.finish(job, 'failed', outcome.reason);
      case 'retry':
        return this.retry(job, outcome.reason);
    }
  }

  private async finish(
    job: ClaimedNotification,
    status: 'sent' | 'skipped' | 'failed',
    note: string,
  ): Promise<NotificationOutcome> {
    const recorded = await this.jobs.finish(job, status, note, this.clock.date());
    return recorded ? status : 'lost';
  }

  private async retry(job: ClaimedNotification, reason: string): Promise<NotificationOutcome> {
    if (job.attempts >= this.options.maxAttempts) {
      this.logger.warn(
        `notification job ${job.id} failed ${job.attempts} times (${reason}); giving up`,
      );
      return this.finish(job, 'failed', reason);
    }
    const backoff = this.options.backoffMs;
    const delay = backoff[Math.min(job.attempts - 1, backoff.length - 1)] ?? 0;
    const now = this.clock.now();
    const recorded = await this.jobs.retryLater(job, reason, new Date(now + delay), new Date(now));
    return recorded ? 'retry' : 'lost';
  }
}

function errorCategory(error: unknown): string {
  const { code, responseCode } = error as { code?: unknown; responseCode?: unknown };
  const label = [responseCode, code].find(
    (value): value is string | number => typeof value === 'string' || typeof value === 'number',
  );
  const message = error instanceof Error ? error.message : 'unknown error';
  return `${label !== undefined ? `${label}: ` : ''}${message}`.slice(0, 200);
}
