import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { InvalidFieldsError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { ContributorAgreementsRepository } from '../users/contributor-agreements.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import { toUserResponse } from './auth.mapper.js';
import type { UserResponse } from './dto/auth.response.js';
import type { UpdateNotificationSettingsDto } from './dto/notification-settings.dto.js';

@Injectable()
export class NotificationSettingsService {
  constructor(
    private readonly users: UsersRepository,
    private readonly agreements: ContributorAgreementsRepository,
  ) {}

  async update(caller: AuthUser, dto: UpdateNotificationSettingsDto): Promise<UserResponse> {
    if (dto.email === undefined && dto.push === undefined) {
      throw InvalidFieldsError.single(['body'], 'Provide email, push or both.', 'missing');
    }
    const user = await this.users.updateNotificationSettings(caller.id, {
      email: dto.email,
      push: dto.push,
    });
    if (!user || !user.isActive) throw new UnauthorizedError();
    return toUserResponse(user, await this.agreements.latestVersion(user.id));
  }
}
