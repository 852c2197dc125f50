import type { Readable } from 'node:stream';

/** One stored object, as `list` yields it. */
export interface StoredMedia {
  key: string;
  /** When it was last written (the storage's own clock). */
  modifiedAt: Date;
}

/** Where uploaded media (and generated files such as the open-data export) lives. Keys are relative paths such as `libraries/ab/abcd.jpg`. */
export abstract class MediaStorage {
  abstract put(key: string, data: Buffer, contentType: string): Promise<void>;
  /**
   * Writes a file from a stream, for files too large to hold in memory. Resolves once the whole file is stored;
   * a reader never sees part of it, and nothing is left behind when the source fails.
   */
  abstract putStream(key: string, source: Readable, contentType: string): Promise<void>;
  /** The stored file as a stream (rejects when it does not exist). */
  abstract openRead(key: string): Promise<Readable>;
  abstract delete(key: string): Promise<void>;
  /** Every stored object under `folder` (in no particular order), partial writes included; for the orphan sweep. */
  abstract list(folder: string): AsyncIterable<StoredMedia>;
  abstract read(key: string): Promise<Buffer>;
  /**
   * Takes a file out of public view without losing it (a rejected community photo may be approved again): it is
   * no longer served under its URL until `restore`. Missing files are ignored.
   */
  abstract withdraw(key: string): Promise<void>;
  /** Puts a withdrawn file back under its key. Missing files are ignored. */
  abstract restore(key: string): Promise<void>;

  /** The site-relative URL clients use, `""` for no media. */
  url(key: string | null | undefined): string {
    return key ? `/media/${key}` : '';
  }
}

const SAFE_KEY = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_.-]*)*$/i;

export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`unsafe media key: ${key}`);
}
