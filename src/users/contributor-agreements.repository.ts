import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../database/database.js';

/** Where an acceptance was given: the public API (app, web) or the staff console. */
export type AgreementChannel = 'api' | 'console';

/** Every query of `contributor_agreements`: which versions of the contributor agreement each user accepted. */
@Injectable()
export class ContributorAgreementsRepository {
  constructor(private readonly db: Database) {}

  /** Records an acceptance; accepting a version again keeps the first record (its time and channel). */
  async record(
    userId: number,
    version: string,
    channel: AgreementChannel,
    acceptedAt: Date,
    sql: Sql = this.db,
  ): Promise<void> {
    await sql.query(
      `INSERT INTO contributor_agreements (user_id, version, channel, accepted_at)
       VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, version) DO NOTHING`,
      [userId, version, channel, acceptedAt],
    );
  }

  /** The version the user accepted most recently, or null. */
  async latestVersion(userId: number): Promise<string | null> {
    const rows = await this.db.query<{ version: string }[]>(
      `SELECT version FROM contributor_agreements WHERE user_id = $1
        ORDER BY accepted_at DESC, id DESC LIMIT 1`,
      [userId],
    );
    return rows[0]?.version ?? null;
  }
}
