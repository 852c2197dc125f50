import { NotificationsModule } from '../notifications/notifications.module.js';
import { Module } from '@nestjs/common';
import { EnrichmentModule } from '../enrichment/enrichment.module.js';
import { ApprovedListRepository } from './approved-list.repository.js';
import { LibrariesController } from './libraries.controller.js';
import { LibrariesRepository } from './libraries.repository.js';
import { LibrariesService } from './libraries.service.js';
import { LibraryMapper } from './library.mapper.js';

@Module({
  imports: [EnrichmentModule, NotificationsModule],
  controllers: [LibrariesController],
  providers: [ApprovedListRepository, LibrariesRepository, LibrariesService, LibraryMapper],
  exports: [ApprovedListRepository, LibrariesRepository, LibrariesService, LibraryMapper],
})
export class LibrariesModule {}
