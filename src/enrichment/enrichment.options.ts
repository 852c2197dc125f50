import type { PollingOptions } from '../common/jobs/polling-worker.js';

/** Tuning of the enrichment worker. Fixed by the contract in production; a test module may override the provider. */
export interface EnrichmentOptions extends PollingOptions {
  /** Per-attempt limit on the chat-completions call (the contract says 15 s). */
  requestTimeoutMs: number;
  /** Tries before a job is given up (status `failed`). */
  maxAttempts: number;
  /** Wait before the 2nd, 3rd… try, indexed by the number of failed attempts so far minus one. */
  backoffMs: readonly number[];
  /** Most jobs one `runOnce()` handles, so a backlog cannot starve shutdown. */
  maxJobsPerRun: number;
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
