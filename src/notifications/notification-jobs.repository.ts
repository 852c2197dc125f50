import { Injectable } from '@nestjs/common';
import type { DeviceEnvironment } from '../auth/device-token.row.js';
import { Database, type Sql } from '../database/database.js';
import type { Channel, NotificationKind } from './notification-kinds.js';

/** A job this worker holds: `attempts` counts the try in progress and identifies this claim. */
export interface ClaimedNotification {
  id: number;
  channel: Channel;
  kind: NotificationKind;
  userId: number | null;
  recipient: string | null;
  deviceTokenId: number | null;
  payload: Record<string, unknown>;
  attempts: number;
  createdAt: Date;
}

/** What a push needs at send time: the device (still active?) and its holder's preference. */
export interface PushTarget {
  token: string;
  environment: DeviceEnvironment;
  isActive: boolean;
  userId: number;
  notifyPush: boolean;
}

export interface EmailRecipientState {
  notifyEmail: boolean;
  isActive: boolean;
}

interface JobRow {
  id: string;
  channel: Channel;
  kind: NotificationKind;
  user_id: number | null;
  recipient: string | null;
  device_token_id: number | null;
  payload: Record<string, unknown>;
  attempts: number;
  created_at: Date;
}

/** Lease expiry, release and give-up keep the collapse index valid: a key already queued again is dropped. */
const FREE_COLLAPSE_KEY = `CASE WHEN job.collapse_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM notification_jobs other
     WHERE other.collapse_key = job.collapse_key AND other.status = 'queued' AND other.id <> job.id)
  THEN NULL ELSE job.collapse_key END`;

/** Every query of the outbound message queue (table `notification_jobs`). */
@Injectable()
export class NotificationJobsRepository {
  constructor(private readonly db: Database) {}

  /** An email to an address (security notices: reset, password and email changes). */
  async insertEmail(
    sql: Sql,
    job: {
      kind: NotificationKind;
      userId: number | null;
      recipient: string;
      payload: Record<string, unknown>;
    },
    now: Date,
  ): Promise<number> {
    const rows = await sql.query<{ id: string }[]>(
      `INSERT INTO notification_jobs
         (channel, kind, user_id, recipient, payload, status, run_after, created_at, updated_at)
       VALUES ('email', $1, $2, $3, $4::jsonb, 'queued', $5, $5, $5)
       RETURNING id`,
      [job.kind, job.userId, job.recipient, JSON.stringify(job.payload), now],
    );
    return Number(rows[0].id);
  }

  /**
   * A notice to a user, by email (when they keep email notices on and have an address) and by push to each of
   * their active devices (when they keep push on and push is configured). Answers how many jobs were queued.
   */
  async insertUserNotice(
    sql: Sql,
    userId: number,
    kind: NotificationKind,
    payload: Record<string, unknown>,
    channels: { email: boolean; push: boolean },
    now: Date,
  ): Promise<number> {
    let queued = 0;
    const json = JSON.stringify(payload);
    if (channels.email) {
      const [, count] = await sql.query<[unknown, number]>(
        `INSERT INTO notification_jobs
           (channel, kind, user_id, recipient, payload, status, run_after, created_at, updated_at)
         SELECT 'email', $2, u.id, u.email, $3::jsonb, 'queued', $4, $4, $4
           FROM users u
          WHERE u.id = $1 AND u.is_active AND u.notify_email AND u.email <> ''`,
        [userId, kind, json, now],
      );
      queued += count;
    }
    if (channels.push) {
      const [, count] = await sql.query<[unknown, number]>(
        `INSERT INTO notification_jobs
           (channel, kind, user_id, device_token_id, payload, status, run_after, created_at, updated_at)
         SELECT 'push', $2, u.id, d.id, $3::jsonb, 'queued', $4, $4, $4
           FROM users u JOIN device_tokens d ON d.user_id = u.id AND d.is_active
          WHERE u.id = $1 AND u.is_active AND u.notify_push`,
        [userId, kind, json, now],
      );
      queued += count;
    }
    return queued;
  }

  /**
   * "Moderation work is waiting" for every active staff member with push on (except the one who caused it), one
   * job per device. Collapsing: a device that already has one queued gets no second (the queued one reports the
   * counts at send time), and a new one waits until `collapseMs` after the user's previous such push went out.
   */
  async insertStaffWork(
    sql: Sql,
    exceptUserId: number | null,
    collapseMs: number,
    now: Date,
  ): Promise<number> {
    const [, count] = await sql.query<[unknown, number]>(
      `INSERT INTO notification_jobs
         (channel, kind, user_id, device_token_id, payload, collapse_key, status, run_after, created_at, updated_at)
       SELECT 'push', 'moderation_work', u.id, d.id, '{}'::jsonb, 'moderation_work:' || d.id, 'queued',
              GREATEST($1::timestamptz, COALESCE(
                (SELECT max(j.claimed_at) FROM notification_jobs j
                  WHERE j.user_id = u.id AND j.kind = 'moderation_work' AND j.status IN ('running', 'sent')),
                '-infinity'::timestamptz) + make_interval(secs => $2::double precision / 1000)),
              $1, $1
         FROM users u JOIN device_tokens d ON d.user_id = u.id AND d.is_active
        WHERE u.is_staff AND u.is_active AND u.notify_push AND u.id IS DISTINCT FROM $3
       ON CONFLICT (collapse_key) WHERE status = 'queued' AND collapse_key IS NOT NULL DO NOTHING`,
      [now, collapseMs, exceptUserId],
    );
    return count;
  }

  /**
   * Jobs whose worker died (lease expired) go back to the queue, or fail when no try is left. A job whose outcome
   * is unknown (the worker died during the send) is tried again: a duplicate is possible only in that window.
   */
  async requeueExpiredLeases(now: Date, maxAttempts: number): Promise<number> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE notification_jobs AS job
          SET status = CASE WHEN job.attempts >= $2 THEN 'failed' ELSE 'queued' END,
              finished_at = CASE WHEN job.attempts >= $2 THEN $1::timestamptz END,
              collapse_key = ${FREE_COLLAPSE_KEY},
              run_after = $1, locked_until = NULL, last_error = 'interrupted', updated_at = $1
        WHERE job.status = 'running' AND job.locked_until <= $1`,
      [now, maxAttempts],
    );
    return affected;
  }

  /** Claims the oldest due job (SKIP LOCKED keeps concurrent workers off it; the lease holds it once committed). */
  async claimNext(now: Date, leaseUntil: Date): Promise<ClaimedNotification | null> {
    const [rows] = await this.db.query<[JobRow[], number]>(
      `UPDATE notification_jobs AS job
          SET status = 'running', attempts = job.attempts + 1, locked_until = $2, claimed_at = $1,
              updated_at = $1
         FROM (SELECT id FROM notification_jobs
                WHERE status = 'queued' AND run_after <= $1
                ORDER BY run_after, id
                LIMIT 1
                FOR UPDATE SKIP LOCKED) AS due
        WHERE job.id = due.id
        RETURNING job.id, job.channel, job.kind, job.user_id, job.recipient, job.device_token_id, job.payload,
                  job.attempts, job.created_at`,
      [now, leaseUntil],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: Number(row.id),
      channel: row.channel,
      kind: row.kind,
      userId: row.user_id,
      recipient: row.recipient,
      deviceTokenId: row.device_token_id,
      payload: row.payload,
      attempts: row.attempts,
      createdAt: new Date(row.created_at),
    };
  }

  /** Ends a claimed job: sent, or skipped (nothing to send any more) with the reason. */
  async finish(
    job: ClaimedNotification,
    status: 'sent' | 'skipped' | 'failed',
    note: string,
    now: Date,
  ): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE notification_jobs
          SET status = $3, locked_until = NULL, last_error = left($4, 200), finished_at = $5, updated_at = $5
        WHERE id = $1 AND status = 'running' AND attempts = $2`,
      [job.id, job.attempts, status, note, now],
    );
    return affected === 1;
  }

  /** A failed try: back to the queue until `retryAt`. */
  async retryLater(
    job: ClaimedNotification,
    error: string,
    retryAt: Date,
    now: Date,
  ): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE notification_jobs AS job
          SET status = 'queued', run_after = $3, locked_until = NULL, last_error = left($4, 200),
              collapse_key = ${FREE_COLLAPSE_KEY}, updated_at = $5
        WHERE job.id = $1 AND job.status = 'running' AND job.attempts = $2`,
      [job.id, job.attempts, retryAt, error, now],
    );
    return affected === 1;
  }

  /** A claim given back untried (shutdown before the send): queued again at once, the try not counted. */
  async release(job: ClaimedNotification, now: Date): Promise<void> {
    await this.db.query(
      `UPDATE notification_jobs AS job
          SET status = 'queued', attempts = job.attempts - 1, locked_until = NULL, claimed_at = NULL,
              collapse_key = ${FREE_COLLAPSE_KEY}, updated_at = $3
        WHERE job.id = $1 AND job.status = 'running' AND job.attempts = $2`,
      [job.id, job.attempts, now],
    );
  }

  async findPushTarget(deviceTokenId: number): Promise<PushTarget | null> {
    const rows = await this.db.query<
      {
        token: string;
        environment: DeviceEnvironment;
        is_active: boolean;
        user_id: number;
        notify_push: boolean;
        user_active: boolean;
      }[]
    >(
      `SELECT d.token, d.environment, d.is_active, d.user_id, u.notify_push, u.is_active AS user_active
         FROM device_tokens d JOIN users u ON u.id = d.user_id
        WHERE d.id = $1`,
      [deviceTokenId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      token: row.token,
      environment: row.environment,
      isActive: row.is_active && row.user_active,
      userId: row.user_id,
      notifyPush: row.notify_push,
    };
  }

  async findEmailRecipientState(userId: number): Promise<EmailRecipientState | null> {
    const rows = await this.db.query<{ notify_email: boolean; is_active: boolean }[]>(
      'SELECT notify_email, is_active FROM users WHERE id = $1',
      [userId],
    );
    const row = rows[0];
    return row ? { notifyEmail: row.notify_email, isActive: row.is_active } : null;
  }

  /** APNs said the token is dead (410 Unregistered, 400 BadDeviceToken): no more pushes to it. */
  async deactivateDevice(deviceTokenId: number, now: Date): Promise<void> {
    await this.db.query(
      'UPDATE device_tokens SET is_active = false, updated_at = $2 WHERE id = $1',
      [deviceTokenId, now],
    );
  }

  /** The moderation summary's pending total (libraries, open reports, photos): what a staff push reports. */
  async pendingModerationCount(): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT ((SELECT count(*) FROM libraries WHERE status = 'pending')
             + (SELECT count(*) FROM reports WHERE status = 'open')
             + (SELECT count(*) FROM library_photos WHERE status = 'pending'))::int AS n`,
    );
    return rows[0].n;
  }

  /** Deletes finished jobs older than `before`, a batch at a time; answers how many went. */
  async purgeFinished(before: Date, batch = 1000): Promise<number> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `DELETE FROM notification_jobs WHERE id IN (
         SELECT id FROM notification_jobs WHERE finished_at < $1 ORDER BY finished_at LIMIT $2)`,
      [before, batch],
    );
    return affected;
  }
}
