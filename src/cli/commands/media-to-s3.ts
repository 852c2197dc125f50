import { Presets, SingleBar } from 'cli-progress';
import { AppConfig } from '../../config/app-config.js';
import { LocalMediaStorage } from '../../common/media/local-media-storage.js';
import { MediaStorage } from '../../common/media/media-storage.js';
import { S3MediaStorage } from '../../common/media/s3-media-storage.js';
import { UsageError, type CliCommand } from '../cli-command.js';

/** Files copied at the same time (each one a PUT, or a multipart upload for large export files). */
const CONCURRENCY = 8;

const CONTENT_TYPES: [RegExp, string][] = [
  [/\.jpe?g$/i, 'image/jpeg'],
  [/\.png$/i, 'image/png'],
  [/\.webp$/i, 'image/webp'],
  [/\.geojson$/i, 'application/geo+json'],
  [/\.gz$/i, 'application/gzip'],
  [/\.json$/i, 'application/json'],
];

export function contentTypeOf(key: string): string {
  return CONTENT_TYPES.find(([pattern]) => pattern.test(key))?.[1] ?? 'application/octet-stream';
}

interface Item {
  source: LocalMediaStorage;
  key: string;
  size: number;
  withdrawn: boolean;
}

/** Every file of a local media tree (and its withdrawn sibling), leaving out the temporary files of writes. */
async function* localItems(root: string): AsyncIterable<Item> {
  const live = new LocalMediaStorage(root);
  const withdrawn = new LocalMediaStorage(live.withdrawnRoot);
  for (const [source, isWithdrawn] of [
    [live, false],
    [withdrawn, true],
  ] as const) {
    for (const folder of await source.folders()) {
      for await (const item of source.list(folder)) {
        if (item.key.endsWith('.tmp')) continue;
        yield { source, key: item.key, size: item.size, withdrawn: isWithdrawn };
      }
    }
  }
}

/**
 * `npm run cli -- media-to-s3 [--from DIR]`: copies a local media tree (MEDIA_ROOT unless --from, and its
 * `.withdrawn` sibling) into the bucket the S3_* settings name (MEDIA_STORAGE=s3). Idempotent and resumable: an
 * object that already has the file's size is skipped, so running it again after an interruption copies only what
 * is missing. Nothing local is removed.
 */
export const mediaToS3Command: CliCommand = {
  usage:
    'media-to-s3 [--from DIR]     copy local media (MEDIA_ROOT by default) into the S3 bucket (MEDIA_STORAGE=s3)',
  options: { from: { type: 'string' } },
  async run(app, values) {
    const config = app.get(AppConfig);
    const target = app.get(MediaStorage);
    if (!(target instanceof S3MediaStorage))
      throw new UsageError('Set MEDIA_STORAGE=s3 and the S3_* settings of the destination bucket.');
    const root = typeof values.from === 'string' ? values.from : config.mediaRoot;

    let total = 0;
    for await (const _item of localItems(root)) total += 1;

    const bar = new SingleBar(
      {
        format: 'Copying media [{bar}] {percentage}% | {value}/{total} | {duration_formatted}',
        stream: process.stderr,
        noTTYOutput: true,
        notTTYSchedule: 5000,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0);
    const counts = { copied: 0, skipped: 0 };
    const failures: string[] = [];
    const running = new Set<Promise<void>>();
    try {
      for await (const item of localItems(root)) {
        const job = target
          .copyIn(
            item.key,
            item.size,
            () => item.source.openRead(item.key),
            contentTypeOf(item.key),
            item.withdrawn,
          )
          .then(
            (outcome) => void (counts[outcome] += 1),
            (error: Error) => void failures.push(`${item.key}: ${error.message}`),
          )
          .finally(() => {
            running.delete(job);
            bar.increment();
          });
        running.add(job);
        if (running.size >= CONCURRENCY) await Promise.race(running);
      }
      await Promise.all(running);
    } finally {
      bar.stop();
    }
    const summary = `Copied ${counts.copied} file(s) to s3://${target.bucket}/${target.prefix}; ${counts.skipped} already there.`;
    if (failures.length)
      throw new Error(
        `${summary} ${failures.length} failed (run the command again to retry them):\n  ${failures.slice(0, 20).join('\n  ')}`,
      );
    return summary;
  },
};
