import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { ForbiddenError, RefusedError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { Database } from '../database/database.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { DuplicateUserError } from '../users/unique-violation.js';
import type { User } from '../users/user.row.js';
import { UsersRepository } from '../users/users.repository.js';
import { ContributorAgreementsRepository } from '../users/contributor-agreements.repository.js';
import { toMessageResponse, toUserResponse } from './auth.mapper.js';
import { AUTH_MESSAGES, DELETE_CONFIRMATION } from './auth.messages.js';
import type { ChangeEmailDto } from './dto/change-email.dto.js';
import type { ChangePasswordDto } from './dto/change-password.dto.js';
import type { DeleteAccountDto } from './dto/delete-account.dto.js';
import type { AccountMessageResponse, UserResponse } from './dto/auth.response.js';
import { isValidEmail, normalizeEmail } from './email.js';
import { checkPasswordPolicy } from './password-policy.js';
import { SessionsRepository } from './sessions.repository.js';
import { NotificationQueue } from '../notifications/notification.queue.js';

/** The signed-in user's own account: read it, change email or password, delete it. */
@Injectable()
export class AccountService {
  constructor(
    private readonly users: UsersRepository,
    private readonly agreements: ContributorAgreementsRepository,
    private readonly sessions: SessionsRepository,
    private readonly hasher: PasswordHasher,
    private readonly clock: Clock,
    private readonly db: Database,
    private readonly notifications: NotificationQueue,
  ) {}

  async me(caller: AuthUser): Promise<UserResponse> {
    const user = await this.load(caller);
    return toUserResponse(user, await this.agreements.latestVersion(user.id));
  }

  async changeEmail(caller: AuthUser, dto: ChangeEmailDto): Promise<UserResponse> {
    const user = await this.load(caller);
    if (user.passwordHash === null) throw new ForbiddenError(AUTH_MESSAGES.socialEmailChange);
    const email = normalizeEmail(dto.email);
    if (!isValidEmail(email)) throw new RefusedError(AUTH_MESSAGES.invalidEmail);
    if (email === normalizeEmail(user.email)) throw new RefusedError(AUTH_MESSAGES.sameEmail);
    if (await this.users.emailExists(email)) throw new RefusedError(AUTH_MESSAGES.emailExists);
    try {
      await this.db.transaction(async (tx) => {
        await this.users.updateEmail(user.id, email, tx);
        await this.notifications.emailChanged(tx, user, user.email, email);
      });
    } catch (error) {
      if (error instanceof DuplicateUserError) throw new RefusedError(AUTH_MESSAGES.emailExists);
      throw error;
    }
    return toUserResponse({ ...user, email }, await this.agreements.latestVersion(user.id));
  }

  /** Changes the password and revokes every other session of the user; the caller's own stays. */
  async changePassword(caller: AuthUser, dto: ChangePasswordDto): Promise<AccountMessageResponse> {
    const user = await this.load(caller);
    if (user.passwordHash === null) throw new ForbiddenError(AUTH_MESSAGES.socialPasswordChange);
    if (!(await this.hasher.verify(user.passwordHash, dto.current_password))) {
      throw new RefusedError(AUTH_MESSAGES.currentPasswordIncorrect);
    }
    if (dto.new_password !== dto.new_password_confirm) {
      throw new RefusedError(AUTH_MESSAGES.passwordsDoNotMatch);
    }
    const violation = checkPasswordPolicy(dto.new_password, {
      username: user.username,
      email: user.email,
    });
    if (violation) throw new RefusedError(violation);
    const passwordHash = await this.hasher.hash(dto.new_password);
    const now = this.clock.date();
    await this.db.transaction(async (tx) => {
      await this.users.updatePasswordHash(user.id, passwordHash, tx);
      await this.sessions.revokeOthers(user.id, caller.sessionId, now, tx);
      await this.notifications.passwordChanged(tx, user, 'changed');
    });
    return toMessageResponse(AUTH_MESSAGES.passwordChanged);
  }

  /** Deletes the account; its sessions, identities, devices and favourites go with it. */
  async deleteAccount(caller: AuthUser, dto: DeleteAccountDto): Promise<AccountMessageResponse> {
    const user = await this.load(caller);
    if (user.passwordHash !== null) {
      if (!dto.password) throw new RefusedError(AUTH_MESSAGES.passwordRequired);
      if (!(await this.hasher.verify(user.passwordHash, dto.password))) {
        throw new RefusedError(AUTH_MESSAGES.incorrectPassword);
      }
    } else if (dto.confirm_text !== DELETE_CONFIRMATION && dto.confirm !== true) {
      throw new RefusedError(AUTH_MESSAGES.confirmDelete);
    }
    await this.users.deleteById(user.id);
    return toMessageResponse(AUTH_MESSAGES.accountDeleted);
  }

  /** The caller's row; gone meanwhile (deleted by a concurrent request) is 401 like any dead token. */
  private async load(caller: AuthUser): Promise<User> {
    const user = await this.users.findById(caller.id);
    if (!user || !user.isActive) throw new UnauthorizedError();
    return user;
  }
}
