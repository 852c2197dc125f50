import { Module } from '@nestjs/common';
import { ModerationAuditRepository } from './moderation-audit.repository.js';
import { ModerationAuditService } from './moderation-audit.service.js';

/** The append-only record of staff decisions, written by moderation and the staff CLI, read by staff. */
@Module({
  providers: [ModerationAuditRepository, ModerationAuditService],
  exports: [ModerationAuditService],
})
export class ModerationAuditModule {}
