import { Module } from '@nestjs/common';
import { MediaReferencesRepository } from './media-references.repository.js';
import { OrphanMediaSweep } from './orphan-media-sweep.js';

/** The server's orphan sweep (the CLI does not run it). */
@Module({
  providers: [MediaReferencesRepository, OrphanMediaSweep],
  exports: [OrphanMediaSweep],
})
export class MediaSweepModule {}
