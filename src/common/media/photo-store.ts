import { Injectable, Logger } from '@nestjs/common';
import { commitOutcomeUnknown } from '../../database/transaction.js';
import { MediaStorage } from './media-storage.js';
import { PhotoProcessor, photoKeys, type PhotoFolder } from './photo-processor.js';

/** A photo as PhotoUpload leaves it: the upload streamed to a temporary file, removed after the request. */
export interface UploadedPhoto {
  path: string;
}

/** The two stored files of one processed photo (the shape rows and staged edits keep). */
export interface StoredPhoto {
  photo_key: string;
  thumbnail_key: string;
}

/**
 * The one photo store: every photo a user or staff member sends (library submissions and edits, staged edits,
 * community photos, report photos) is processed by PhotoProcessor and stored through MediaStorage here, and its
 * files are removed, withdrawn or restored here. An unusable image raises InvalidPhotoError, which the error filter
 * answers with 400 `Upload a valid image in JPEG, PNG, or WEBP format.`.
 */
@Injectable()
export class PhotoStore {
  private readonly logger = new Logger('PhotoStore');

  constructor(
    private readonly processor: PhotoProcessor,
    private readonly media: MediaStorage,
  ) {}

  /** Validates and re-encodes the upload, then stores both files under their final keys. */
  async store(file: UploadedPhoto, folder: PhotoFolder): Promise<StoredPhoto> {
    const processed = await this.processor.process(file.path);
    const keys = photoKeys(folder);
    await this.media.put(keys.main, processed.main, 'image/jpeg');
    try {
      await this.media.put(keys.thumbnail, processed.thumbnail, 'image/jpeg');
    } catch (error) {
      await this.media.delete(keys.main).catch(() => undefined);
      throw error;
    }
    return { photo_key: keys.main, thumbnail_key: keys.thumbnail };
  }

  /**
   * Runs `work` (the transaction recording the photo) and removes the photo's files only when it failed before its
   * COMMIT: once a COMMIT began, files stay (a committed row always has its files; if the outcome is unknown the
   * orphan sweep removes them later, should no row reference them).
   */
  async withFiles<T>(photo: StoredPhoto | null, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (photo && !commitOutcomeUnknown(error)) await this.discard(photo);
      throw error;
    }
  }

  /** Deletes both files; a failure is logged (the orphan sweep removes what is left). */
  async discard(photo: StoredPhoto): Promise<void> {
    for (const key of [photo.photo_key, photo.thumbnail_key]) {
      await this.media
        .delete(key)
        .catch((error: Error) => this.logger.warn(`could not delete ${key}: ${error.message}`));
    }
  }

  /** Takes files out of public view, or puts them back, after a decision is committed; failures are logged. */
  async move(action: 'withdraw' | 'restore', keys: string[], what: string): Promise<void> {
    try {
      for (const key of keys) await this.media[action](key);
    } catch (error) {
      this.logger.error(`could not ${action} the files of ${what}: ${(error as Error).message}`);
    }
  }
}
