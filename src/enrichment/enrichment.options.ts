/** Tuning of the enrichment worker. Fixed by the contract in production; a test module may override the provider. */
export interface EnrichmentOptions {
  /** Per-attempt limit on the chat-completions call (the contract says 15 s). */
  requestTimeoutMs: number;
  /** Tries before a job is given up (status `failed`). */
  maxAttempts: number;
  /** Wait before the 2nd, 3rd… try, indexed by the number of failed attempts so far minus one. */
  backoffMs: readonly number[];
  /** How long a claimed job stays invisible to other workers; a crash mid-job is retried once it passes. */
  leaseMs: number;
  /** Pause between polls of the background loop. */
  pollIntervalMs: number;
  /** Most jobs one `runOnce()` handles, so a backlog cannot starve shutdown. */
  maxJobsPerRun: number;
  /** Start polling on application bootstrap (tests drive `runOnce()` by hand instead). */
  autoStart: boolean;
}

export const ENRICHMENT_OPTIONS = Symbol('ENRICHMENT_OPTIONS');

export const DEFAULT_ENRICHMENT_OPTIONS: EnrichmentOptions = {
  requestTimeoutMs: 15_000,
  maxAttempts: 3,
  backoffMs: [30_000, 120_000],
  leaseMs: 120_000,
  pollIntervalMs: 1_500,
  maxJobsPerRun: 20,
  autoStart: true,
};
