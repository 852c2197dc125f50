import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../database/database.js';
import { asDuplicateUserError } from './unique-violation.js';
import { USER_COLUMNS, type User } from './user.row.js';

export interface NewUser {
  username: string;
  email: string;
  passwordHash: string | null;
  firstName?: string;
  lastName?: string;
  lastLoginAt?: Date | null;
  isStaff?: boolean;
}

/** Matches an email, never the '' of an account without one (both sides case-insensitive). */
const EMAIL_IS = (param: string) => `(u.email <> '' AND lower(u.email) = lower(${param}))`;
const USERNAME_IS = (param: string) => `lower(u.username) = lower(${param})`;

/** Every query of `users`. A change of a row also sets its `updated_at`. */
@Injectable()
export class UsersRepository {
  constructor(private readonly db: Database) {}

  async findById(id: number): Promise<User | null> {
    const rows = await this.db.query<User[]>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * The accounts a login identifier can mean: the one with that username, then the one with that email
   * (case-insensitive; at most two). Both are tried, so a username equal to someone's email cannot lock them out.
   */
  loginCandidates(identifier: string): Promise<User[]> {
    if (!identifier) return Promise.resolve([]);
    return this.db.query<User[]>(
      `SELECT ${USER_COLUMNS} FROM users u
        WHERE ${USERNAME_IS('$1')} OR ${EMAIL_IS('$1')}
        ORDER BY (${USERNAME_IS('$1')}) DESC
        LIMIT 2`,
      [identifier],
    );
  }

  async findByUsername(username: string): Promise<User | null> {
    const rows = await this.db.query<User[]>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE ${USERNAME_IS('$1')}`,
      [username],
    );
    return rows[0] ?? null;
  }

  async findByEmail(email: string): Promise<User | null> {
    if (!email) return null;
    const rows = await this.db.query<User[]>(
      `SELECT ${USER_COLUMNS} FROM users u WHERE ${EMAIL_IS('$1')}`,
      [email],
    );
    return rows[0] ?? null;
  }

  usernameExists(username: string): Promise<boolean> {
    return this.exists(USERNAME_IS('$1'), username);
  }

  emailExists(email: string): Promise<boolean> {
    return this.exists(EMAIL_IS('$1'), email);
  }

  private async exists(condition: string, value: string): Promise<boolean> {
    const rows = await this.db.query<{ found: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM users u WHERE ${condition}) AS found`,
      [value],
    );
    return rows[0].found;
  }

  /** Whether the username and the email are taken (case-insensitive), read in one statement. */
  async clashes(username: string, email: string): Promise<{ username: boolean; email: boolean }> {
    const rows = await this.db.query<{ username: boolean; email: boolean }[]>(
      `SELECT coalesce(bool_or(${USERNAME_IS('$1')}), false) AS username,
              coalesce(bool_or(${EMAIL_IS('$2')}), false) AS email
         FROM users u
        WHERE ${USERNAME_IS('$1')} OR ${EMAIL_IS('$2')}`,
      [username, email],
    );
    return { username: rows[0]?.username ?? false, email: rows[0]?.email ?? false };
  }

  /** Which of these usernames are taken (case-insensitive); answered lower-cased. */
  async takenUsernames(candidates: string[]): Promise<Set<string>> {
    if (!candidates.length) return new Set();
    const rows = await this.db.query<{ username: string }[]>(
      'SELECT lower(u.username) AS username FROM users u WHERE lower(u.username) = ANY($1::text[])',
      [candidates.map((name) => name.toLowerCase())],
    );
    return new Set(rows.map((row) => row.username));
  }

  /** Inserts an account; a username or email already taken (even by a concurrent insert) is DuplicateUserError. */
  async insert(values: NewUser, sql: Sql = this.db): Promise<User> {
    try {
      const rows = await sql.query<User[]>(
        `INSERT INTO users AS u (username, email, password_hash, first_name, last_name, last_login_at, is_staff)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING ${USER_COLUMNS}`,
        [
          values.username,
          values.email,
          values.passwordHash,
          values.firstName ?? '',
          values.lastName ?? '',
          values.lastLoginAt ?? null,
          values.isStaff ?? false,
        ],
      );
      return rows[0];
    } catch (error) {
      throw asDuplicateUserError(error);
    }
  }

  /** Changes the email; one already taken (even concurrently) is DuplicateUserError('email'). */
  async updateEmail(id: number, email: string, sql: Sql = this.db): Promise<void> {
    try {
      await sql.query('UPDATE users SET email = $2, updated_at = CURRENT_TIMESTAMP WHERE id = $1', [
        id,
        email,
      ]);
    } catch (error) {
      throw asDuplicateUserError(error);
    }
  }

  async updatePasswordHash(id: number, passwordHash: string, sql: Sql = this.db): Promise<void> {
    await sql.query(
      'UPDATE users SET password_hash = $2, updated_at = CURRENT_TIMESTAMP WHERE id = $1',
      [id, passwordHash],
    );
  }

  /**
   * Makes the account an active staff account with this email and password (the command line's `create-staff`
   * of an existing username); answers it.
   */
  async promoteToStaff(
    id: number,
    email: string,
    passwordHash: string,
    sql: Sql = this.db,
  ): Promise<User | null> {
    const [rows] = await sql.query<[User[], number]>(
      `UPDATE users AS u
          SET is_staff = true, is_active = true, email = $2, password_hash = $3, updated_at = CURRENT_TIMESTAMP
        WHERE u.id = $1
        RETURNING ${USER_COLUMNS}`,
      [id, email, passwordHash],
    );
    return rows[0] ?? null;
  }

  /** Sets the given notice preferences (an absent one is kept); answers the updated user (null when gone). */
  async updateNotificationSettings(
    id: number,
    settings: { email?: boolean; push?: boolean },
  ): Promise<User | null> {
    const [rows] = await this.db.query<[User[], number]>(
      `UPDATE users AS u
          SET notify_email = coalesce($2::boolean, u.notify_email),
              notify_push = coalesce($3::boolean, u.notify_push),
              updated_at = CURRENT_TIMESTAMP
        WHERE u.id = $1
        RETURNING ${USER_COLUMNS}`,
      [id, settings.email ?? null, settings.push ?? null],
    );
    return rows[0] ?? null;
  }

  async recordLogin(id: number, at: Date): Promise<void> {
    await this.db.query(
      'UPDATE users SET last_login_at = $2, updated_at = CURRENT_TIMESTAMP WHERE id = $1',
      [id, at],
    );
  }

  /** Sets first/last name where they are still blank (a linked social identity supplies them). */
  async fillBlankNames(id: number, firstName: string, lastName: string): Promise<void> {
    await this.db.query(
      `UPDATE users
          SET first_name = CASE WHEN first_name = '' THEN $2 ELSE first_name END,
              last_name = CASE WHEN last_name = '' THEN $3 ELSE last_name END,
              updated_at = CURRENT_TIMESTAMP
        WHERE id = $1`,
      [id, firstName, lastName],
    );
  }

  /** Deletes the account; sessions, identities, devices and favourites go with it (ON DELETE CASCADE). */
  async deleteById(id: number): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>('DELETE FROM users WHERE id = $1', [
      id,
    ]);
    return affected > 0;
  }
}
