import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { HOUR_MS } from '../clock.js';
import { MediaReferencesRepository } from './media-references.repository.js';
import { MediaStorage } from './media-storage.js';
import { PHOTO_FOLDERS } from './photo-processor.js';

const BATCH = 500;

export interface SweepResult {
  /** Files old enough to be judged. */
  checked: number;
  removed: string[];
}

/**
 * Removes photo files (the PHOTO_FOLDERS; generated files such as the open-data export keep their own retention)
 * that no row references once they are older than MEDIA_SWEEP_GRACE_HOURS: the files of a
 * submission whose commit failed with an unknown outcome, or of a process killed between writing and committing.
 * Files younger than the grace period are never judged (an upload in flight writes its files before it commits);
 * a file is judged against the rows after it was listed, so a row committed meanwhile keeps its file. Runs at
 * start and every MEDIA_SWEEP_INTERVAL_HOURS, under a database advisory lock (one instance at a time); every file
 * operation goes through MediaStorage.
 */
@Injectable()
export class OrphanMediaSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('MediaSweep');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly media: MediaStorage,
    private readonly references: MediaReferencesRepository,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.runInBackground();
    const every = this.config.mediaSweep.intervalHours * HOUR_MS;
    if (every > 0) {
      this.timer = setInterval(() => this.runInBackground(), every);
      this.timer.unref();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /**
   * One sweep; null when another instance is sweeping. `now` and the file times are the storage's real clock, not
   * the injected one (file modification times come from the operating system).
   */
  sweep(
    graceMs = this.config.mediaSweep.graceHours * HOUR_MS,
    now = Date.now(),
  ): Promise<SweepResult | null> {
    return this.references.withSweepLock(async (findReferenced) => {
      const result: SweepResult = { checked: 0, removed: [] };
      let batch: string[] = [];
      const flush = async () => {
        const referenced = await findReferenced(batch);
        for (const key of batch) {
          if (referenced.has(key)) continue;
          try {
            await this.media.delete(key);
            result.removed.push(key);
          } catch (error) {
            this.logger.warn(`could not remove ${key}: ${(error as Error).message}`);
          }
        }
        batch = [];
      };
      for (const folder of PHOTO_FOLDERS) {
        for await (const item of this.media.list(folder)) {
          if (now - item.modifiedAt.getTime() < graceMs) continue;
          result.checked += 1;
          batch.push(item.key);
          if (batch.length >= BATCH) await flush();
        }
      }
      if (batch.length) await flush();
      return result;
    });
  }

  private runInBackground(): void {
    if (this.running) return;
    this.running = this.sweep()
      .then(
        (result) => {
          if (result?.removed.length)
            this.logger.log(`removed ${result.removed.length} unreferenced media file(s)`);
        },
        (error: Error) => this.logger.warn(`media sweep failed: ${error.message}`),
      )
      .finally(() => {
        this.running = null;
      });
  }
}
