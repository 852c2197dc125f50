import { Module } from '@nestjs/common';
import { LibrariesModule } from '../libraries/libraries.module.js';
import { MapController } from './map.controller.js';
import { MapMapper } from './map.mapper.js';
import { MapRepository } from './map.repository.js';
import { MapService } from './map.service.js';

/** The public map: the clustered feed and vector tiles under /libraries/ (issue 17). */
@Module({
  imports: [LibrariesModule],
  controllers: [MapController],
  providers: [MapRepository, MapService, MapMapper],
})
export class MapModule {}
