import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { PollLoop } from './poll-loop.js';

/**
 * The Nest side of a durable job's background loop: polls from application bootstrap when the options' `autoStart`
 * and the worker's `configured()` say so, and on shutdown calls `beforeStop()` (e.g. to abort calls in flight) and waits for the runs in flight. A subclass
 * says what one run does (`runOnce`, which tests also call by hand) and passes work started by hand through
 * `track` so that shutdown waits for it too.
 */
export abstract class PollingWorker implements OnApplicationBootstrap, OnModuleDestroy {
  protected readonly logger = new Logger(this.constructor.name);
  private readonly loop: PollLoop;
  private readonly autoStart: boolean;

  /** `failure` prefixes the log line of a run that threw. */
  protected constructor(
    options: Pick<PollingOptions, 'pollIntervalMs' | 'autoStart'>,
    failure: string,
  ) {
    this.autoStart = options.autoStart;
    this.loop = new PollLoop(
      options.pollIntervalMs,
      () => this.runOnce(),
      (error) => this.logger.error(`${failure}: ${(error as Error).message}`),
    );
  }

  abstract runOnce(): Promise<unknown>;

  /** Whether the feature this worker serves is configured (else it never polls). */
  protected abstract configured(): boolean;

  protected beforeStop(): void {}

  onApplicationBootstrap(): void {
    if (this.autoStart && this.configured()) this.loop.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.beforeStop();
    await this.loop.stop();
  }

  protected track<T>(run: Promise<T>): Promise<T> {
    return this.loop.track(run);
  }
}

/** The tuning every polling worker has; a worker's own options extend it. */
export interface PollingOptions {
  /** How long a claim stays invisible to other workers; a crash mid-run is taken up again once it passes. */
  leaseMs: number;
  /** Pause between polls of the background loop. */
  pollIntervalMs: number;
  /** Start polling on application bootstrap (tests drive `runOnce()` by hand instead). */
  autoStart: boolean;
}
