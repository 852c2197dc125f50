import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { ExportFileStats } from './export.repository.js';

/** Passes bytes through unchanged while counting them and hashing them (SHA-256). */
export class MeteredStream extends Transform {
  /** The stats of bytes already in memory. */
  static of(data: Buffer): ExportFileStats {
    return { bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
  }

  private readonly hash = createHash('sha256');
  private bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  /** Call once, after the stream has ended. */
  stats(): ExportFileStats {
    return { bytes: this.bytes, sha256: this.hash.digest('hex') };
  }
}
