import { Module } from '@nestjs/common';
import { LibrariesModule } from './libraries.module.js';
import { LibraryDetailController } from './library-detail.controller.js';

/** Holds only the `/libraries/{slug}` routes; AppModule imports it after every module with literal routes. */
@Module({
  imports: [LibrariesModule],
  controllers: [LibraryDetailController],
})
export class LibraryDetailModule {}
