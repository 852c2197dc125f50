import { Module } from '@nestjs/common';
import { EnrichmentModule } from '../enrichment/enrichment.module.js';
import { LibrariesModule } from '../libraries/libraries.module.js';
import { ModerationAuditModule } from '../moderation-audit/moderation-audit.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ModerationController } from './moderation.controller.js';
import { ModerationRepository } from './moderation.repository.js';
import { ModerationService } from './moderation.service.js';

@Module({
  imports: [LibrariesModule, EnrichmentModule, ModerationAuditModule, NotificationsModule],
  controllers: [ModerationController],
  providers: [ModerationRepository, ModerationService],
  exports: [ModerationService, ModerationAuditModule],
})
export class ModerationModule {}
