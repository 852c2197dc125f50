import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository, type EntityManager } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import { uniqueViolationOf } from '../users/unique-violation.js';
import { UsersRepository, type NewUser } from '../users/users.repository.js';
import { SocialIdentityEntity, type SocialProvider } from './social-identity.entity.js';

/** The identity (provider + subject) is already linked, e.g. by a concurrent first sign-in. */
export class IdentityAlreadyLinkedError extends Error {
  constructor() {
    super('identity already linked');
    this.name = 'IdentityAlreadyLinkedError';
  }
}

const IDENTITY_UNIQUE = 'social_identities_provider_subject_key';

@Injectable()
export class SocialIdentitiesRepository {
  constructor(
    @InjectRepository(SocialIdentityEntity)
    private readonly identities: Repository<SocialIdentityEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
  ) {}

  async findUser(provider: SocialProvider, subject: string): Promise<UserEntity | null> {
    const identity = await this.identities.findOne({
      where: { provider, subject },
      relations: { user: true },
    });
    return identity?.user ?? null;
  }

  /** Links the identity to an existing account. */
  async link(provider: SocialProvider, subject: string, userId: number): Promise<void> {
    try {
      await this.identities.insert({ provider, subject, userId });
    } catch (error) {
      if (uniqueViolationOf(error) === IDENTITY_UNIQUE) throw new IdentityAlreadyLinkedError();
      throw error;
    }
  }

  /**
   * Creates the account and its identity together (one transaction). Throws DuplicateUserError when the username
   * or email was taken meanwhile, IdentityAlreadyLinkedError when a concurrent sign-in linked the identity first.
   */
  async createUserWithIdentity(
    values: NewUser,
    provider: SocialProvider,
    subject: string,
    /** More rows of the new account, written in the same transaction (e.g. its agreement acceptance). */
    onCreated: (manager: EntityManager, userId: number) => Promise<void> = () => Promise.resolve(),
  ): Promise<UserEntity> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const user = await this.users.insert(values, manager);
        await manager
          .getRepository(SocialIdentityEntity)
          .insert({ provider, subject, userId: user.id });
        await onCreated(manager, user.id);
        return user;
      });
    } catch (error) {
      if (uniqueViolationOf(error) === IDENTITY_UNIQUE) throw new IdentityAlreadyLinkedError();
      throw error;
    }
  }
}
