import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UserEntity } from './user.entity.js';
import { UsersRepository } from './users.repository.js';
import { PasswordHasher } from './password-hasher.js';
import { StaffService } from './staff.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity])],
  providers: [UsersRepository, PasswordHasher, StaffService],
  exports: [UsersRepository, PasswordHasher, StaffService],
})
export class UsersModule {}
