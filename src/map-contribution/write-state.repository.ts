import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../database/database.js';
import type { WriteState } from './domain/write-gates.js';

/** The single row of `map_write_state`: what the map API said about the current token (never the token). */
@Injectable()
export class WriteStateRepository {
  constructor(private readonly db: Database) {}

  /** With `sql`, read on the caller's transaction (never a second pool connection while one is held). */
  async read(sql: Sql = this.db): Promise<WriteState | null> {
    const rows = await sql.query<WriteState[]>('SELECT * FROM map_write_state WHERE id = 1');
    return rows[0] ?? null;
  }

  async save(values: WriteState): Promise<void> {
    await this.db.query(
      `INSERT INTO map_write_state (id, token_fingerprint, write_api_allowed, permissions_checked_at, disabled_at,
         disabled_reason)
       VALUES (1, $1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET token_fingerprint = $1, write_api_allowed = $2, permissions_checked_at = $3,
         disabled_at = $4, disabled_reason = $5`,
      [
        values.token_fingerprint,
        values.write_api_allowed,
        values.permissions_checked_at,
        values.disabled_at,
        values.disabled_reason,
      ],
    );
  }
}
