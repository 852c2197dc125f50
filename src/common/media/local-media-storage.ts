import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, opendir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MediaStorage, assertSafeKey, type StoredMedia } from './media-storage.js';

/**
 * Media on local disk under MEDIA_ROOT. Writes go to a temporary file first, so a reader never sees half a file.
 * Withdrawn files move to a sibling directory (`<MEDIA_ROOT>.withdrawn`), outside what /media/ serves.
 */
export class LocalMediaStorage extends MediaStorage {
  readonly withdrawnRoot: string;

  constructor(readonly root: string) {
    super();
    this.withdrawnRoot = `${resolve(root)}.withdrawn`;
  }

  private path(key: string, root = this.root): string {
    assertSafeKey(key);
    return join(root, key);
  }

  private async move(key: string, from: string, to: string): Promise<void> {
    const target = this.path(key, to);
    await mkdir(dirname(target), { recursive: true });
    try {
      await rename(this.path(key, from), target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  withdraw(key: string): Promise<void> {
    return this.move(key, this.root, this.withdrawnRoot);
  }

  restore(key: string): Promise<void> {
    return this.move(key, this.withdrawnRoot, this.root);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const temporary = `${target}.${randomUUID()}.tmp`;
    await writeFile(temporary, data, { mode: 0o644 });
    await rename(temporary, target);
  }

  async putStream(key: string, source: Readable): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const temporary = `${target}.${randomUUID()}.tmp`;
    try {
      await pipeline(source, createWriteStream(temporary, { mode: 0o644 }));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async openRead(key: string): Promise<Readable> {
    // Opening first makes a missing file a rejection here rather than an error event mid-response.
    const handle = await open(this.path(key), 'r');
    return handle.createReadStream();
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async read(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  /** Walks the tree depth-first with a directory handle at a time, so a large tree is never held in memory. */
  async *list(folder: string): AsyncIterable<StoredMedia> {
    assertSafeKey(folder);
    const pending = [folder];
    while (pending.length) {
      const prefix = pending.pop()!;
      let directory;
      try {
        directory = await opendir(join(this.root, prefix));
      } catch {
        continue; // removed meanwhile
      }
      for await (const entry of directory) {
        const key = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.isDirectory()) pending.push(key);
        else if (entry.isFile()) {
          const info = await stat(join(this.root, key)).catch(() => null);
          if (info) yield { key, modifiedAt: info.mtime };
        }
      }
    }
  }
}
