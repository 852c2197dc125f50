export const NOTIFICATIONS_OPTIONS = Symbol('NOTIFICATIONS_OPTIONS');

/** Tuning of the notification worker; tests replace it (no background polling, small batches). */
export interface NotificationsOptions {
  /** Start polling on bootstrap (when NOTIFICATIONS_POLL_INTERVAL is not `off`). */
  autoStart: boolean;
  /** How long a claim holds a job; a worker that dies leaves it to others after this. */
  leaseMs: number;
  /** Tries per job, the first included. */
  maxAttempts: number;
  /** Wait before the 2nd, 3rd, … try (the last value repeats). */
  backoffMs: number[];
  maxJobsPerRun: number;
  /** Staff get at most one "moderation work is waiting" push per this period (on each of their devices). */
  staffCollapseMs: number;
  /** A password reset link is valid this long. */
  resetTokenTtlMs: number;
  /** Finished jobs are deleted after this long. */
  retentionMs: number;
  /** Timeout of one SMTP or APNs exchange. */
  sendTimeoutMs: number;
}

const MINUTE = 60_000;

export const DEFAULT_NOTIFICATIONS_OPTIONS: NotificationsOptions = {
  autoStart: true,
  leaseMs: 2 * MINUTE,
  maxAttempts: 6,
  backoffMs: [30_000, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, 60 * MINUTE],
  maxJobsPerRun: 50,
  staffCollapseMs: 15 * MINUTE,
  resetTokenTtlMs: 60 * MINUTE,
  retentionMs: 30 * 24 * 60 * MINUTE,
  sendTimeoutMs: 15_000,
};
