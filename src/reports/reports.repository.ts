import { Injectable } from '@nestjs/common';
import { Database, type Transaction } from '../database/database.js';
import type { LibraryRefColumns } from '../libraries/library.row.js';
import type { ReportReason } from './dto/create-report.dto.js';

export interface MyReportRow extends LibraryRefColumns {
  id: number;
  reason: string;
  status: string;
  created_at: Date;
}

/** A report as its insert returns it. */
export interface ReportRow {
  id: number;
  reason: string;
  created_at: Date;
}

@Injectable()
export class ReportsRepository {
  constructor(private readonly db: Database) {}

  /** In an explicit transaction, so a connection lost during COMMIT is known as such (see runTransaction). */
  async insert(
    values: {
      libraryId: number;
      userId: number;
      reason: ReportReason;
      details: string;
      photoKey: string | null;
      thumbnailKey: string | null;
    },
    /** Runs in the insert's transaction with the new row (e.g. to record an idempotency key). */
    afterInsert: (tx: Transaction, row: ReportRow) => Promise<void> = () => Promise.resolve(),
  ): Promise<ReportRow> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<ReportRow[]>(
        `INSERT INTO reports (library_id, created_by, reason, details, photo_key, thumbnail_key)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, reason, created_at`,
        [
          values.libraryId,
          values.userId,
          values.reason,
          values.details,
          values.photoKey,
          values.thumbnailKey,
        ],
      );
      await afterInsert(tx, rows[0]);
      return rows[0];
    });
  }

  async countByCreator(userId: number): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM reports WHERE created_by = $1',
      [userId],
    );
    return rows[0].n;
  }

  findByCreator(userId: number, limit: number, offset: number): Promise<MyReportRow[]> {
    return this.db.query<MyReportRow[]>(
      `SELECT r.id, r.reason, r.status, r.created_at, l.id AS library_id, l.slug AS library_slug,
              l.name AS library_name, l.city AS library_city, l.country AS library_country,
              l.status AS library_status
       FROM reports r JOIN libraries l ON l.id = r.library_id
       WHERE r.created_by = $1 ORDER BY r.created_at DESC, r.id DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    );
  }
}
