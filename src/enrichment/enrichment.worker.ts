import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { PollingWorker } from '../common/jobs/polling-worker.js';
import { MediaStorage } from '../common/media/media-storage.js';
import { AppConfig } from '../config/app-config.js';
import { AiChatClient, EnrichmentAttemptError, EnrichmentInterrupted } from './ai-chat.client.js';
import { ENRICHMENT_OPTIONS, type EnrichmentOptions } from './enrichment.options.js';
import { EnrichmentRepository, type ClaimedJob } from './enrichment.repository.js';

export type JobOutcome = 'filled' | 'skipped' | 'retry' | 'failed' | 'lost' | 'interrupted';

/**
 * Works the durable enrichment queue: claims due jobs (SKIP LOCKED, with a lease), asks the AI once per claim and
 * fills only the fields that are still blank. Started on bootstrap when AI is configured, stopped on shutdown; a job
 * interrupted by a crash or a shutdown is taken up again once its lease expires.
 */
@Injectable()
export class EnrichmentWorker extends PollingWorker {
  private readonly shutdown = new AbortController();

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly jobs: EnrichmentRepository,
    private readonly ai: AiChatClient,
    private readonly media: MediaStorage,
    @Inject(ENRICHMENT_OPTIONS) private readonly options: EnrichmentOptions,
  ) {
    super(options, 'enrichment poll failed');
  }

  protected configured(): boolean {
    return this.config.ai !== null;
  }

  /** An AI call in flight ends now instead of at its timeout. */
  protected override beforeStop(): void {
    this.shutdown.abort();
  }

  /** Handles the jobs due now (at most `maxJobsPerRun`); resolves to how many were claimed. */
  runOnce(): Promise<number> {
    return this.track(this.drain());
  }

  private async drain(): Promise<number> {
    if (!this.config.ai || this.shutdown.signal.aborted) return 0;
    await this.jobs.failExhaustedLeases(this.clock.date(), this.options.maxAttempts);
    let claimed = 0;
    while (claimed < this.options.maxJobsPerRun && !this.shutdown.signal.aborted) {
      const now = this.clock.now();
      const job = await this.jobs.claimNext(
        new Date(now),
        new Date(now + this.options.leaseMs),
        this.options.maxAttempts,
      );
      if (!job) break;
      claimed += 1;
      const outcome = await this.process(job);
      if (outcome === 'interrupted') break;
    }
    return claimed;
  }

  private async process(job: ClaimedJob): Promise<JobOutcome> {
    const library = await this.jobs.findLibrary(job.libraryId);
    if (!library || (library.name.trim() !== '' && library.description.trim() !== '')) {
      await this.jobs.markDone(job, this.clock.date());
      return 'skipped';
    }
    try {
      if (!library.photoKey) throw new EnrichmentAttemptError('photo_missing');
      const jpeg = await this.media.read(library.photoKey).catch(() => {
        throw new EnrichmentAttemptError('photo_unavailable');
      });
      const suggestion = await this.ai.suggest({ ...library, jpeg }, this.shutdown.signal);
      const filled = await this.jobs.applySuggestion(job, suggestion, this.clock.date());
      if (filled === null) return 'lost';
      this.logger.log(
        `enrichment job ${job.id}: library ${job.libraryId} filled [${filled.join(', ')}]`,
      );
      return 'filled';
    } catch (error) {
      // Shutdown: leave the lease in place; the job is taken up again when it expires, like after a crash.
      if (error instanceof EnrichmentInterrupted) return 'interrupted';
      const category = error instanceof EnrichmentAttemptError ? error.category : 'internal_error';
      if (!(error instanceof EnrichmentAttemptError)) {
        this.logger.error(`enrichment job ${job.id}: ${(error as Error).stack ?? String(error)}`);
      }
      return this.fail(job, category);
    }
  }

  private async fail(job: ClaimedJob, category: string): Promise<JobOutcome> {
    const giveUp = job.attempts >= this.options.maxAttempts;
    const now = this.clock.now();
    const backoff = this.options.backoffMs;
    const delay = backoff[Math.min(job.attempts - 1, backoff.length - 1)] ?? 0;
    const recorded = await this.jobs.recordFailure(
      job,
      category,
      new Date(now + delay),
      giveUp,
      new Date(now),
    );
    this.logger.warn(
      `enrichment job ${job.id} attempt ${job.attempts} failed (${category})${giveUp ? '; giving up' : ''}`,
    );
    if (!recorded) return 'lost';
    return giveUp ? 'failed' : 'retry';
  }
}
