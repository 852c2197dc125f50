import { Module } from '@nestjs/common';
import { LibrariesModule } from '../libraries/libraries.module.js';
import { StatisticsModule } from '../statistics/statistics.module.js';
import { MapPage } from './map-page.js';
import { MapPageController } from './map-page.controller.js';
import { MapController } from './map.controller.js';
import { MapMapper } from './map.mapper.js';
import { MapRepository } from './map.repository.js';
import { MapService } from './map.service.js';

/** The public map: the clustered feed and vector tiles under /libraries/, and the map page at `/` (issue 17). */
@Module({
  imports: [LibrariesModule, StatisticsModule],
  controllers: [MapController, MapPageController],
  providers: [MapRepository, MapService, MapMapper, MapPage],
})
export class MapModule {}
