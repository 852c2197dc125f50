import { mkdirSync } from 'node:fs';
import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { LocalMediaStorage } from './local-media-storage.js';
import { MediaStorage } from './media-storage.js';
import { StaleUploadsCleanup } from './stale-uploads.js';

@Global()
@Module({
  providers: [
    StaleUploadsCleanup,
    {
      provide: MediaStorage,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        mkdirSync(config.mediaRoot, { recursive: true });
        return new LocalMediaStorage(config.mediaRoot);
      },
    },
  ],
  exports: [MediaStorage],
})
export class MediaModule {}
