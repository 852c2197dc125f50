import { Injectable } from '@nestjs/common';
import { uniqueViolationOf } from '../common/errors/unique-violation.js';
import { Database, type Sql, type Transaction } from '../database/database.js';
import { USER_COLUMNS, type User } from '../users/user.row.js';
import { UsersRepository, type NewUser } from '../users/users.repository.js';
import type { SocialProvider } from './social-provider.js';

/** The identity (provider + subject) is already linked, e.g. by a concurrent first sign-in. */
export class IdentityAlreadyLinkedError extends Error {
  constructor() {
    super('identity already linked');
    this.name = 'IdentityAlreadyLinkedError';
  }
}

const IDENTITY_UNIQUE = 'social_identities_provider_subject_key';

/** Every query of `social_identities`: an account at an identity provider that signs in as one of our users. */
@Injectable()
export class SocialIdentitiesRepository {
  constructor(
    private readonly db: Database,
    private readonly users: UsersRepository,
  ) {}

  async findUser(provider: SocialProvider, subject: string): Promise<User | null> {
    const rows = await this.db.query<User[]>(
      `SELECT ${USER_COLUMNS} FROM social_identities i JOIN users u ON u.id = i.user_id
        WHERE i.provider = $1 AND i.subject = $2`,
      [provider, subject],
    );
    return rows[0] ?? null;
  }

  /** Links the identity to an existing account. */
  async link(provider: SocialProvider, subject: string, userId: number): Promise<void> {
    try {
      await this.insert(this.db, provider, subject, userId);
    } catch (error) {
      throw asAlreadyLinked(error);
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
    onCreated: (tx: Transaction, userId: number) => Promise<void> = () => Promise.resolve(),
  ): Promise<User> {
    try {
      return await this.db.transaction(async (tx) => {
        const user = await this.users.insert(values, tx);
        await this.insert(tx, provider, subject, user.id);
        await onCreated(tx, user.id);
        return user;
      });
    } catch (error) {
      throw asAlreadyLinked(error);
    }
  }

  private async insert(
    sql: Sql,
    provider: SocialProvider,
    subject: string,
    userId: number,
  ): Promise<void> {
    await sql.query(
      'INSERT INTO social_identities (provider, subject, user_id) VALUES ($1, $2, $3)',
      [provider, subject, userId],
    );
  }
}

/** The identity's unique violation as IdentityAlreadyLinkedError; other errors unchanged. */
function asAlreadyLinked(error: unknown): unknown {
  return uniqueViolationOf(error) === IDENTITY_UNIQUE ? new IdentityAlreadyLinkedError() : error;
}
