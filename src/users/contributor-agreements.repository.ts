import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/** Where an acceptance was given: the public API (app, web) or the staff console. */
export type AgreementChannel = 'api' | 'console';

/** Every query of `contributor_agreements`: which versions of the contributor agreement each user accepted. */
@Injectable()
export class ContributorAgreementsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Records an acceptance; accepting a version again keeps the first record (its time and channel). */
  async record(
    userId: number,
    version: string,
    channel: AgreementChannel,
    acceptedAt: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO contributor_agreements (user_id, version, channel, accepted_at)
       VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, version) DO NOTHING`,
      [userId, version, channel, acceptedAt],
    );
  }

  /** The version the user accepted most recently, or null. */
  async latestVersion(userId: number): Promise<string | null> {
    const rows = await this.dataSource.query<{ version: string }[]>(
      `SELECT version FROM contributor_agreements WHERE user_id = $1
        ORDER BY accepted_at DESC, id DESC LIMIT 1`,
      [userId],
    );
    return rows[0]?.version ?? null;
  }
}
