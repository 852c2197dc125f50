import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';

/** A live console session with the account behind it, as the console guard needs it. */
export interface ConsoleSessionRow {
  session_id: string;
  csrf_token: string;
  last_seen_at: Date;
  user_id: number;
  username: string;
  is_staff: boolean;
}

/**
 * Console sessions. A console session lives while its refresh session does (not revoked, not expired, the user
 * active) and while it is used at least once per idle period.
 */
@Injectable()
export class ConsoleSessionRepository {
  constructor(private readonly db: Database) {}

  async insert(tokenHash: Buffer, sessionId: string, csrfToken: string, now: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO console_sessions (token_hash, session_id, csrf_token, created_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $4)`,
      [tokenHash, sessionId, csrfToken, now],
    );
  }

  async findLive(tokenHash: Buffer, now: Date, idleSince: Date): Promise<ConsoleSessionRow | null> {
    const rows = await this.db.query<ConsoleSessionRow[]>(
      `SELECT cs.session_id, cs.csrf_token, cs.last_seen_at, u.id AS user_id, u.username, u.is_staff
         FROM console_sessions cs
         JOIN refresh_sessions rs ON rs.id = cs.session_id
         JOIN users u ON u.id = rs.user_id
        WHERE cs.token_hash = $1 AND cs.last_seen_at > $3
          AND rs.revoked_at IS NULL AND rs.expires_at > $2 AND u.is_active`,
      [tokenHash, now, idleSince],
    );
    return rows[0] ?? null;
  }

  async touch(tokenHash: Buffer, now: Date): Promise<void> {
    await this.db.query(`UPDATE console_sessions SET last_seen_at = $2 WHERE token_hash = $1`, [
      tokenHash,
      now,
    ]);
  }

  /** Ends the session (sign-out): the console row goes and its refresh session is revoked. */
  async end(tokenHash: Buffer, now: Date): Promise<void> {
    await this.db.query(
      `WITH ended AS (DELETE FROM console_sessions WHERE token_hash = $1 RETURNING session_id)
       UPDATE refresh_sessions SET revoked_at = $2
        WHERE id IN (SELECT session_id FROM ended) AND revoked_at IS NULL`,
      [tokenHash, now],
    );
  }

  /** Ends every session idle since before `idleSince` (sessions nobody signs out of). */
  async endIdle(idleSince: Date, now: Date): Promise<void> {
    await this.db.query(
      `WITH ended AS (DELETE FROM console_sessions WHERE last_seen_at <= $1 RETURNING session_id)
       UPDATE refresh_sessions SET revoked_at = $2
        WHERE id IN (SELECT session_id FROM ended) AND revoked_at IS NULL`,
      [idleSince, now],
    );
  }
}
