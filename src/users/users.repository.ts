import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { UserEntity } from './user.entity.js';
import { asDuplicateUserError } from './unique-violation.js';

export interface NewUser {
  username: string;
  email: string;
  passwordHash: string | null;
  firstName?: string;
  lastName?: string;
  lastLoginAt?: Date | null;
}

@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(UserEntity) private readonly users: Repository<UserEntity>) {}

  private repo(manager?: EntityManager): Repository<UserEntity> {
    return manager ? manager.getRepository(UserEntity) : this.users;
  }

  findById(id: number): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  /**
   * The accounts a login identifier can mean: the one with that username, then the one with that email
   * (case-insensitive; at most two). Both are tried, so a username equal to someone's email cannot lock them out.
   */
  loginCandidates(identifier: string): Promise<UserEntity[]> {
    if (!identifier) return Promise.resolve([]);
    return this.users
      .createQueryBuilder('user')
      .where('lower(user.username) = lower(:identifier)', { identifier })
      .orWhere("(user.email <> '' AND lower(user.email) = lower(:identifier))", { identifier })
      .orderBy('(lower(user.username) = lower(:identifier))', 'DESC')
      .limit(2)
      .getMany();
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.users
      .createQueryBuilder('user')
      .where('lower(user.username) = lower(:username)', { username })
      .getOne();
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    if (!email) return Promise.resolve(null);
    return this.users
      .createQueryBuilder('user')
      .where("user.email <> '' AND lower(user.email) = lower(:email)", { email })
      .getOne();
  }

  usernameExists(username: string): Promise<boolean> {
    return this.users
      .createQueryBuilder('user')
      .where('lower(user.username) = lower(:username)', { username })
      .getExists();
  }

  emailExists(email: string): Promise<boolean> {
    return this.users
      .createQueryBuilder('user')
      .where("user.email <> '' AND lower(user.email) = lower(:email)", { email })
      .getExists();
  }

  /** Whether the username and the email are taken (case-insensitive), read in one statement. */
  async clashes(username: string, email: string): Promise<{ username: boolean; email: boolean }> {
    const row = await this.users
      .createQueryBuilder('user')
      .select('coalesce(bool_or(lower(user.username) = lower(:username)), false)', 'username')
      .addSelect(
        "coalesce(bool_or(user.email <> '' AND lower(user.email) = lower(:email)), false)",
        'email',
      )
      .where(
        "lower(user.username) = lower(:username) OR (user.email <> '' AND lower(user.email) = lower(:email))",
        {
          username,
          email,
        },
      )
      .getRawOne<{ username: boolean; email: boolean }>();
    return { username: row?.username ?? false, email: row?.email ?? false };
  }

  /** Which of these usernames are taken (case-insensitive); answered lower-cased. */
  async takenUsernames(candidates: string[]): Promise<Set<string>> {
    if (!candidates.length) return new Set();
    const rows = await this.users
      .createQueryBuilder('user')
      .select('lower(user.username)', 'username')
      .where('lower(user.username) IN (:...names)', {
        names: candidates.map((name) => name.toLowerCase()),
      })
      .getRawMany<{ username: string }>();
    return new Set(rows.map((row) => row.username));
  }

  /** Inserts an account; a username or email already taken (even by a concurrent insert) is DuplicateUserError. */
  async insert(values: NewUser, manager?: EntityManager): Promise<UserEntity> {
    const repo = this.repo(manager);
    try {
      return await repo.save(
        repo.create({
          username: values.username,
          email: values.email,
          passwordHash: values.passwordHash,
          firstName: values.firstName ?? '',
          lastName: values.lastName ?? '',
          lastLoginAt: values.lastLoginAt ?? null,
        }),
      );
    } catch (error) {
      throw asDuplicateUserError(error);
    }
  }

  /** Changes the email; one already taken (even concurrently) is DuplicateUserError('email'). */
  async updateEmail(id: number, email: string, manager?: EntityManager): Promise<void> {
    try {
      await this.repo(manager).update({ id }, { email });
    } catch (error) {
      throw asDuplicateUserError(error);
    }
  }

  async updatePasswordHash(
    id: number,
    passwordHash: string,
    manager?: EntityManager,
  ): Promise<void> {
    await this.repo(manager).update({ id }, { passwordHash });
  }

  /** Sets the given notice preferences; answers the updated user (null when gone). */
  async updateNotificationSettings(
    id: number,
    settings: { email?: boolean; push?: boolean },
  ): Promise<UserEntity | null> {
    const values: Partial<UserEntity> = {};
    if (settings.email !== undefined) values.notifyEmail = settings.email;
    if (settings.push !== undefined) values.notifyPush = settings.push;
    await this.users.update({ id }, values);
    return this.users.findOneBy({ id });
  }

  async recordLogin(id: number, at: Date): Promise<void> {
    await this.users.update({ id }, { lastLoginAt: at });
  }

  /** Sets first/last name where they are still blank (a linked social identity supplies them). */
  async fillBlankNames(id: number, firstName: string, lastName: string): Promise<void> {
    await this.users
      .createQueryBuilder()
      .update(UserEntity)
      .set({
        firstName: () => "CASE WHEN first_name = '' THEN :firstName ELSE first_name END",
        lastName: () => "CASE WHEN last_name = '' THEN :lastName ELSE last_name END",
      })
      .where('id = :id', { id, firstName, lastName })
      .execute();
  }

  /** Deletes the account; sessions, identities, devices and favourites go with it (ON DELETE CASCADE). */
  async deleteById(id: number): Promise<boolean> {
    const result = await this.users.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  save(user: UserEntity, manager?: EntityManager): Promise<UserEntity> {
    return this.repo(manager).save(user);
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.users.manager.transaction(work);
  }

  create(values: Partial<UserEntity>): UserEntity {
    return this.users.create(values);
  }

  count(): Promise<number> {
    return this.users.count();
  }
}
