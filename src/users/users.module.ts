import { Module } from '@nestjs/common';
import { ModerationAuditModule } from '../moderation-audit/moderation-audit.module.js';
import { UsersRepository } from './users.repository.js';
import { PasswordHasher } from './password-hasher.js';
import { StaffService } from './staff.service.js';
import { ContributorAgreementsRepository } from './contributor-agreements.repository.js';

@Module({
  imports: [ModerationAuditModule],
  providers: [UsersRepository, PasswordHasher, StaffService, ContributorAgreementsRepository],
  exports: [UsersRepository, PasswordHasher, StaffService, ContributorAgreementsRepository],
})
export class UsersModule {}
