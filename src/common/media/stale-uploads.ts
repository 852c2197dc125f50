import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { processAlive } from '../process-alive.js';
import { UPLOAD_TEMP_DIR } from './photo-upload.interceptor.js';

/** No upload's request lasts this long: an older temporary file is left over whatever its name says. */
export const STALE_UPLOAD_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Removes the temporary uploads a process left behind when it was killed mid-request: files named `<pid>-<uuid>`
 * whose process no longer runs, and any file older than STALE_UPLOAD_AGE_MS (a reused pid). Files of running
 * processes, this one's included, are kept. Returns the names removed.
 */
export async function removeStaleUploads(
  directory = UPLOAD_TEMP_DIR,
  now = Date.now(),
): Promise<string[]> {
  const names = await readdir(directory).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const match = /^(\d+)-/.exec(name);
    if (!match) continue;
    const path = join(directory, name);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) continue;
    const pid = Number(match[1]);
    const stale =
      now - info.mtimeMs > STALE_UPLOAD_AGE_MS || (pid !== process.pid && !processAlive(pid));
    if (!stale) continue;
    await rm(path, { force: true });
    removed.push(name);
  }
  return removed;
}

/** Clears leftovers of killed processes once at start, in the background (start-up does not wait for it). */
@Injectable()
export class StaleUploadsCleanup implements OnApplicationBootstrap {
  private readonly logger = new Logger('PhotoUpload');

  onApplicationBootstrap(): void {
    removeStaleUploads().then(
      (removed) => {
        if (removed.length)
          this.logger.log(`removed ${removed.length} temporary upload(s) left by ended processes`);
      },
      (error: Error) => this.logger.warn(`could not clear stale uploads: ${error.message}`),
    );
  }
}
