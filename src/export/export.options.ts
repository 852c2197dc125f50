/** Tuning of the export job. Fixed in production; a test may override the provider. */
export interface ExportOptions {
  /** Libraries read per keyset batch (and written per chunk). */
  batchSize: number;
  /** Published versions kept; older ones are removed with their files. */
  keepVersions: number;
  /** How long a claimed run stays invisible to other instances; renewed while the run makes progress. */
  leaseMs: number;
  /** Pause between checks whether the export is due. */
  pollIntervalMs: number;
  /** Wait before a failed scheduled run is tried again. */
  retryDelayMs: number;
  /** Poll in the background once the app has started (tests drive `runOnce()` by hand instead). */
  autoStart: boolean;
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
