import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { PollingWorker } from '../common/jobs/polling-worker.js';
import {
  ScheduledTasksRepository,
  type TaskLease,
} from '../common/jobs/scheduled-tasks.repository.js';
import { AppConfig } from '../config/app-config.js';
import { EXPORT_OPTIONS, EXPORT_TASK, type ExportOptions } from './export.options.js';
import { ExportService, type ExportProgress, type ExportRunResult } from './export.service.js';

export class ExportLeaseLostError extends Error {
  constructor() {
    super('the export lease was lost to another instance');
  }
}

/**
 * The durable export job: due every EXPORT_INTERVAL (a row of `scheduled_tasks`), run by whichever instance claims
 * it first, and on demand from the CLI. A run holds a lease that it renews as it goes; if its process dies, the
 * lease expires and the next due check of any instance runs it again (cleaning up what the dead run left).
 */
@Injectable()
export class ExportJob extends PollingWorker {
  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly tasks: ScheduledTasksRepository,
    private readonly exports: ExportService,
    @Inject(EXPORT_OPTIONS) private readonly options: ExportOptions,
  ) {
    super(options, 'export run failed');
  }

  protected configured(): boolean {
    return this.config.openDataExport.intervalSeconds !== null;
  }

  /** The scheduled path: runs the export when it is due and no other instance is running it; null otherwise. */
  runOnce(): Promise<ExportRunResult | null> {
    if (this.config.openDataExport.intervalSeconds === null) return Promise.resolve(null);
    return this.track(this.run(false));
  }

  /** On demand (`npm run cli -- export`): runs now unless another instance holds the run ('busy'). */
  runNow(onProgress?: ExportProgress): Promise<ExportRunResult | 'busy'> {
    return this.track(this.run(true, onProgress)).then((result) => result ?? 'busy');
  }

  private async run(force: boolean, onProgress?: ExportProgress): Promise<ExportRunResult | null> {
    const now = this.clock.now();
    await this.tasks.ensure(EXPORT_TASK, new Date(now));
    const lease: TaskLease = { name: EXPORT_TASK, leaseId: randomUUID() };
    const claimed = await this.tasks.claim(
      lease,
      new Date(now),
      new Date(now + this.options.leaseMs),
      force,
    );
    if (!claimed) return null;
    let renewedAt = now;
    const keepAlive = async () => {
      const at = this.clock.now();
      if (at - renewedAt < this.options.leaseMs / 3) return;
      if (!(await this.tasks.renew(lease, new Date(at + this.options.leaseMs)))) {
        throw new ExportLeaseLostError();
      }
      renewedAt = at;
    };
    const intervalMs = (this.config.openDataExport.intervalSeconds ?? 86_400) * 1000;
    try {
      const result = await this.exports.generate(keepAlive, onProgress);
      const finished = this.clock.now();
      await this.tasks.release(
        lease,
        new Date(finished),
        new Date(finished + intervalMs),
        result.outcome,
      );
      return result;
    } catch (error) {
      const finished = this.clock.now();
      await this.tasks
        .release(
          lease,
          new Date(finished),
          new Date(finished + Math.min(this.options.retryDelayMs, intervalMs)),
          'failed',
          (error as Error).message,
        )
        .catch(() => undefined);
      throw error;
    }
  }
}
