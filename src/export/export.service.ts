import { once } from 'node:events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Clock } from '../common/clock.js';
import { UnavailableError } from '../common/errors/domain-errors.js';
import { ScheduledTasksRepository } from '../common/jobs/scheduled-tasks.repository.js';
import type { StoredFile } from '../common/http/send-stored-file.js';
import { MediaStorage } from '../common/media/media-storage.js';
import { AppConfig } from '../config/app-config.js';
import {
  COLLECTION_TAIL,
  collectionHead,
  exportMetadata,
  fileStem,
  libraryFeature,
} from './export.format.js';
import { EXPORT_OPTIONS, EXPORT_TASK, type ExportOptions } from './export.options.js';
import {
  ExportRepository,
  type ExportFileStats,
  type ExportVersionRow,
} from './export.repository.js';
import { MeteredStream } from './metered-stream.js';

export type ExportProgress = (done: number, total: number) => void;

export interface ExportRunResult {
  outcome: 'created' | 'unchanged';
  /** The version now served. */
  version: ExportVersionRow;
  removedVersions: number;
}

export const EXPORT_PREFIX = 'exports';

export type ExportFileKind = 'geojson' | 'geojson_gz' | 'metadata';

/** One file of the current version, ready to be served. */
export type ExportFile = StoredFile;

export const EXPORT_UNAVAILABLE_MESSAGE =
  'The open-data export is not available yet. Please try again later.';
/** Retry-After while the first export is due or running. */
const RETRY_SOON_SECONDS = 60;
/** Versions one second may hold (see claimStem). */
const MAX_STEM_ATTEMPTS = 20;

async function write(stream: Writable, chunk: Buffer): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

/**
 * Builds and serves the open-data export. A run streams the approved libraries (keyset batches in one snapshot)
 * once, through two meters: the plain GeoJSON and its gzip, each hashed while it is written to media storage, so
 * memory stays flat however many libraries there are. Identical content to the current version is discarded.
 */
@Injectable()
export class ExportService {
  private readonly logger = new Logger(ExportService.name);

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly media: MediaStorage,
    private readonly exports: ExportRepository,
    private readonly tasks: ScheduledTasksRepository,
    @Inject(EXPORT_OPTIONS) private readonly options: ExportOptions,
  ) {}

  /**
   * Generates a version. The caller holds the export lease (only one run at a time); `keepAlive` is called between
   * batches and throws when the lease was lost.
   */
  async generate(
    keepAlive: () => Promise<void> = () => Promise.resolve(),
    onProgress?: ExportProgress,
  ): Promise<ExportRunResult> {
    await this.removeAbandoned();
    const generatedAt = this.clock.date();
    const { id, stem, names, keys } = await this.claimStem(generatedAt);
    try {
      const data = await this.writeData(keys.geojsonKey, keys.gzKey, keepAlive, onProgress);
      const current = await this.exports.latestPublished();
      if (current && current.geojson_sha256 === data.geojson.sha256) {
        await this.discard(id, keys);
        return { outcome: 'unchanged', version: current, removedVersions: 0 };
      }
      const metadata = Buffer.from(
        `${JSON.stringify(
          exportMetadata({
            serviceName: this.config.serviceName,
            generatedAt,
            recordCount: data.recordCount,
            geojson: { name: names.geojson, ...data.geojson },
            gz: { name: names.gz, ...data.gz },
          }),
          null,
          2,
        )}\n`,
      );
      await this.media.put(keys.metadataKey, metadata, 'application/json');
      await this.exports.publish(id, { ...data, metadata: MeteredStream.of(metadata) });
    } catch (error) {
      await this.discard(id, keys).catch((cleanup: unknown) =>
        this.logger.error(`export ${stem}: clean-up failed: ${(cleanup as Error).message}`),
      );
      throw error;
    }
    // Published: from here on nothing undoes the version. Retention that fails is retried by the next run.
    const removedVersions = await this.removeOldVersions().catch((error: unknown) => {
      this.logger.error(`export: removing old versions failed: ${(error as Error).message}`);
      return 0;
    });
    const version = await this.exports.latestPublished();
    if (!version) throw new Error('the published export version vanished');
    this.logger.log(
      `export ${stem}: ${version.record_count} libraries, ${version.gz_bytes} bytes gzipped`,
    );
    return { outcome: 'created', version, removedVersions };
  }

  /**
   * Records the run under the first free file stem of its second: `libraries-<time>Z`, then `…Z-2`, `…Z-3`. Two
   * runs within one second (a run discarded as unchanged keeps no row, a published one does) would otherwise
   * collide on the stem, which is unique.
   */
  private async claimStem(generatedAt: Date) {
    const base = fileStem(generatedAt);
    for (let attempt = 1; attempt <= MAX_STEM_ATTEMPTS; attempt += 1) {
      const stem = attempt === 1 ? base : `${base}-${attempt}`;
      const names = {
        geojson: `${stem}.geojson`,
        gz: `${stem}.geojson.gz`,
        metadata: `${stem}.metadata.json`,
      };
      const keys = {
        geojsonKey: `${EXPORT_PREFIX}/${names.geojson}`,
        gzKey: `${EXPORT_PREFIX}/${names.gz}`,
        metadataKey: `${EXPORT_PREFIX}/${names.metadata}`,
      };
      const id = await this.exports.insertBuilding({ fileStem: stem, generatedAt, ...keys });
      if (id !== null) return { id, stem, names, keys };
    }
    throw new Error(`export: ${MAX_STEM_ATTEMPTS} versions already carry the stem ${base}`);
  }

  /** The current version's file of that kind; 503 with Retry-After (the next run) before the first export. */
  async currentFile(kind: ExportFileKind): Promise<ExportFile> {
    const version = await this.exports.latestPublished();
    if (!version?.geojson_sha256 || !version.gz_sha256 || !version.metadata_sha256) {
      throw new UnavailableError(EXPORT_UNAVAILABLE_MESSAGE, await this.retryAfterSeconds());
    }
    const file = {
      geojson: {
        name: `${version.file_stem}.geojson`,
        key: version.geojson_key,
        contentType: 'application/geo+json',
        bytes: version.geojson_bytes,
        sha256: version.geojson_sha256,
      },
      geojson_gz: {
        name: `${version.file_stem}.geojson.gz`,
        key: version.gz_key,
        contentType: 'application/gzip',
        bytes: version.gz_bytes,
        sha256: version.gz_sha256,
      },
      metadata: {
        name: `${version.file_stem}.metadata.json`,
        key: version.metadata_key,
        contentType: 'application/json',
        bytes: version.metadata_bytes,
        sha256: version.metadata_sha256,
      },
    }[kind];
    return {
      name: file.name,
      contentType: file.contentType,
      bytes: Number(file.bytes),
      sha256: file.sha256,
      lastModified: new Date(version.generated_at),
      open: () => this.media.openRead(file.key),
    };
  }

  /** Until the next scheduled run (at most a day); a minute when it is due or running or none is scheduled. */
  private async retryAfterSeconds(): Promise<number> {
    if (this.config.openDataExport.intervalSeconds === null) return RETRY_SOON_SECONDS;
    const next = await this.tasks.nextRunAt(EXPORT_TASK);
    const seconds = next ? Math.ceil((next.getTime() - this.clock.now()) / 1000) : 0;
    return seconds > 0 ? Math.min(seconds, 86_400) : RETRY_SOON_SECONDS;
  }

  private async writeData(
    geojsonKey: string,
    gzKey: string,
    keepAlive: () => Promise<void>,
    onProgress?: ExportProgress,
  ): Promise<{ recordCount: number; geojson: ExportFileStats; gz: ExportFileStats }> {
    const plain = new MeteredStream();
    const gzip = createGzip();
    const gzipped = new MeteredStream();
    const stored = Promise.all([
      this.media.putStream(geojsonKey, plain, 'application/geo+json'),
      this.media.putStream(gzKey, gzipped, 'application/gzip'),
      pipeline(gzip, gzipped),
    ]);
    // A failure on either side ends the other: a failed write makes the producer's next write or drain wait
    // reject; a failed read destroys the streams, so the storage drops its partial files.
    const abort = (error: unknown) => {
      plain.destroy(error as Error);
      gzip.destroy(error as Error);
    };
    stored.catch(abort);
    const emit = async (text: string) => {
      const chunk = Buffer.from(text);
      await Promise.all([write(plain, chunk), write(gzip, chunk)]);
    };
    const mediaUrl = (key: string | null | undefined) => this.media.url(key);
    // The embedded database has one connection: there the batches run one by one, releasing it in between.
    const produced = this.exports.inSnapshot(this.config.database.url !== null, async (sql) => {
      const total = await this.exports.countApproved(sql);
      onProgress?.(0, total);
      await emit(collectionHead(this.config.serviceName));
      let count = 0;
      let afterId = 0;
      for (;;) {
        const rows = await this.exports.approvedAfter(sql, afterId, this.options.batchSize);
        if (rows.length === 0) break;
        const lines = rows.map(
          (row, index) =>
            `${count + index === 0 ? '\n' : ',\n'}${JSON.stringify(libraryFeature(row, mediaUrl))}`,
        );
        await emit(lines.join(''));
        count += rows.length;
        afterId = rows[rows.length - 1].id;
        onProgress?.(count, Math.max(total, count));
        await keepAlive();
      }
      await emit(COLLECTION_TAIL);
      plain.end();
      gzip.end();
      return count;
    });
    produced.catch(abort);
    const [recordCount] = await Promise.all([produced, stored]);
    return { recordCount, geojson: plain.stats(), gz: gzipped.stats() };
  }

  /** Keeps the newest `keepVersions` published versions; removes the rest, rows first, then their files. */
  private async removeOldVersions(): Promise<number> {
    const old = await this.exports.publishedBeyond(this.options.keepVersions);
    for (const version of old) {
      await this.exports.delete(version.id);
      await this.deleteFiles(version);
    }
    return old.length;
  }

  /** Runs that died half-way (their `building` row names the files they may have left). */
  private async removeAbandoned(): Promise<void> {
    for (const version of await this.exports.building()) {
      this.logger.warn(`export ${version.file_stem}: removing an interrupted run`);
      await this.discard(version.id, {
        geojsonKey: version.geojson_key,
        gzKey: version.gz_key,
        metadataKey: version.metadata_key,
      });
    }
  }

  private async discard(
    id: number,
    keys: { geojsonKey: string; gzKey: string; metadataKey: string },
  ): Promise<void> {
    await Promise.all([
      this.media.delete(keys.geojsonKey),
      this.media.delete(keys.gzKey),
      this.media.delete(keys.metadataKey),
    ]);
    await this.exports.delete(id);
  }

  private async deleteFiles(version: ExportVersionRow): Promise<void> {
    for (const key of [version.geojson_key, version.gz_key, version.metadata_key]) {
      await this.media.delete(key).catch((error: unknown) => {
        this.logger.warn(`export: could not delete ${key}: ${(error as Error).message}`);
      });
    }
  }
}
