import { Injectable } from '@nestjs/common';
import { Database, type Sql, type Transaction } from '../database/database.js';

export interface ResetAccount {
  id: number;
  username: string;
  email: string;
}

export interface HeldResetToken {
  id: number;
  userId: number;
  expiresAt: Date;
  usedAt: Date | null;
  username: string;
  email: string;
  userActive: boolean;
}

/** Single-use password reset tokens (table `password_reset_tokens`; only the SHA-256 of a token is stored). */
@Injectable()
export class PasswordResetTokensRepository {
  constructor(private readonly db: Database) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** The active account using this address (emails are unique case-insensitively), if any. */
  async findAccountByEmail(email: string): Promise<ResetAccount | null> {
    if (!email) return null;
    const rows = await this.db.query<ResetAccount[]>(
      `SELECT id, username, email FROM users
        WHERE email <> '' AND lower(email) = lower($1) AND is_active`,
      [email],
    );
    return rows[0] ?? null;
  }

  /**
   * The token a reset mail carries. A retry of the same mail replaces the token of its failed try (never delivered);
   * expired tokens of the user older than a day are cleared on the way.
   */
  async issue(
    userId: number,
    jobId: number,
    tokenHash: Buffer,
    now: Date,
    expiresAt: Date,
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `DELETE FROM password_reset_tokens
          WHERE (job_id = $1 AND used_at IS NULL)
             OR (user_id = $2 AND expires_at < $3::timestamptz - interval '1 day')`,
        [jobId, userId, now],
      );
      await tx.query(
        `INSERT INTO password_reset_tokens (user_id, token_hash, job_id, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5)`,
        [userId, tokenHash, jobId, now, expiresAt],
      );
    });
  }

  /** The token with this hash and its account, row-locked for the rest of the transaction. */
  async findForUpdate(tokenHash: Buffer, tx: Transaction): Promise<HeldResetToken | null> {
    const rows = await tx.query<
      {
        id: string;
        user_id: number;
        expires_at: Date;
        used_at: Date | null;
        username: string;
        email: string;
        is_active: boolean;
      }[]
    >(
      `SELECT t.id, t.user_id, t.expires_at, t.used_at, u.username, u.email, u.is_active
         FROM password_reset_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1
        FOR UPDATE OF t`,
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: Number(row.id),
      userId: row.user_id,
      expiresAt: new Date(row.expires_at),
      usedAt: row.used_at ? new Date(row.used_at) : null,
      username: row.username,
      email: row.email,
      userActive: row.is_active,
    };
  }

  /** Whether a token is usable now (the reset page checks before showing its form). */
  async isUsable(tokenHash: Buffer, now: Date): Promise<boolean> {
    const rows = await this.db.query<unknown[]>(
      `SELECT 1 FROM password_reset_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2 AND u.is_active`,
      [tokenHash, now],
    );
    return rows.length > 0;
  }

  /** Uses this token up, and every other open token of the user with it. */
  async useAll(userId: number, now: Date, tx: Sql): Promise<void> {
    await tx.query(
      'UPDATE password_reset_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL',
      [userId, now],
    );
  }

  /** Sets the password hash; a social-only account gets its first local password this way. */
  async setPassword(userId: number, passwordHash: string, tx: Sql): Promise<void> {
    await tx.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [
      userId,
      passwordHash,
    ]);
  }

  /** A reset signs the account out everywhere: every refresh session (and so every console session) ends. */
  async revokeAllSessions(userId: number, now: Date, tx: Sql): Promise<void> {
    await tx.query(
      'UPDATE refresh_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL',
      [userId, now],
    );
  }
}
