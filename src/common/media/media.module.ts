import { mkdirSync } from 'node:fs';
import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { LocalMediaStorage } from './local-media-storage.js';
import { MediaStorage } from './media-storage.js';
import { PhotoProcessor } from './photo-processor.js';
import { PhotoStore } from './photo-store.js';
import { S3MediaStorage } from './s3-media-storage.js';
import { StaleUploadsCleanup } from './stale-uploads.js';

/** The media storage MEDIA_STORAGE selects: MEDIA_ROOT on local disk, or an S3-compatible bucket. */
export function createMediaStorage(config: AppConfig): MediaStorage {
  const settings = config.mediaStorage;
  if (settings.kind === 's3') return new S3MediaStorage(settings);
  mkdirSync(config.mediaRoot, { recursive: true });
  return new LocalMediaStorage(config.mediaRoot);
}

@Global()
@Module({
  providers: [
    StaleUploadsCleanup,
    PhotoProcessor,
    PhotoStore,
    { provide: MediaStorage, inject: [AppConfig], useFactory: createMediaStorage },
  ],
  exports: [MediaStorage, PhotoProcessor, PhotoStore],
})
export class MediaModule {}
