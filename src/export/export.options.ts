import type { PollingOptions } from '../common/jobs/polling-worker.js';

/**
 * Tuning of the export job. Fixed in production; a test may override the provider. The lease is renewed while the
 * run makes progress; the poll checks whether the export is due.
 */
export interface ExportOptions extends PollingOptions {
  /** Libraries read per keyset batch (and written per chunk). */
  batchSize: number;
  /** Published versions kept; older ones are removed with their files. */
  keepVersions: number;
  /** Wait before a failed scheduled run is tried again. */
  retryDelayMs: number;
}

export const EXPORT_OPTIONS = Symbol('EXPORT_OPTIONS');

export const DEFAULT_EXPORT_OPTIONS: ExportOptions = {
  batchSize: 2000,
  keepVersions: 7,
  leaseMs: 10 * 60_000,
  pollIntervalMs: 60_000,
  retryDelayMs: 15 * 60_000,
  autoStart: true,
};

/** The row of `scheduled_tasks` the export job uses. */
export const EXPORT_TASK = 'libraries-export';
