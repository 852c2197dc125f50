import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ModerationAuditModule } from '../moderation-audit/moderation-audit.module.js';
import { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';
import { PasswordHasher } from './password-hasher.js';
import { StaffService } from './staff.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity]), ModerationAuditModule],
  providers: [UsersRepository, PasswordHasher, StaffService],
  exports: [UsersRepository, PasswordHasher, StaffService],
})
export class UsersModule {}
