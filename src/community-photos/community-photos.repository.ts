import { Injectable } from '@nestjs/common';
import { Database, type Transaction } from '../database/database.js';
import type { LibraryRefColumns } from '../libraries/library.row.js';

/** Community photos a user may have pending or approved on one library (rejected ones do not count). */
export const PHOTOS_PER_USER_PER_LIBRARY = 3;

export interface MyPhotoRow extends LibraryRefColumns {
  id: number;
  caption: string;
  photo_key: string;
  thumbnail_key: string;
  status: string;
  created_at: Date;
}

/** A community photo as its insert returns it. */
export interface CommunityPhotoRow {
  id: number;
  caption: string;
  status: string;
  created_at: Date;
}

@Injectable()
export class CommunityPhotosRepository {
  constructor(private readonly db: Database) {}

  /**
   * Inserts a pending photo unless the user already has the maximum pending or approved on that library. The
   * count and the insert run under a transaction-scoped advisory lock on (user, library), so parallel uploads by
   * one user cannot overshoot. Returns null when the limit is reached.
   */
  async insertWithinLimit(
    values: {
      libraryId: number;
      userId: number;
      caption: string;
      photoKey: string;
      thumbnailKey: string;
    },
    /** Runs in the insert's transaction with the new row (e.g. to record an idempotency key). */
    afterInsert: (tx: Transaction, row: CommunityPhotoRow) => Promise<void> = () =>
      Promise.resolve(),
  ): Promise<CommunityPhotoRow | null> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [values.userId, values.libraryId]);
      const [{ n }] = await tx.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM library_photos
         WHERE created_by = $1 AND library_id = $2 AND status IN ('pending', 'approved')`,
        [values.userId, values.libraryId],
      );
      if (n >= PHOTOS_PER_USER_PER_LIBRARY) return null;
      const rows = await tx.query<CommunityPhotoRow[]>(
        `INSERT INTO library_photos (library_id, created_by, caption, photo_key, thumbnail_key)
         VALUES ($1, $2, $3, $4, $5) RETURNING id, caption, status, created_at`,
        [values.libraryId, values.userId, values.caption, values.photoKey, values.thumbnailKey],
      );
      await afterInsert(tx, rows[0]);
      return rows[0];
    });
  }

  async countActive(userId: number, libraryId: number): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM library_photos
       WHERE created_by = $1 AND library_id = $2 AND status IN ('pending', 'approved')`,
      [userId, libraryId],
    );
    return rows[0].n;
  }

  async countByCreator(userId: number): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM library_photos WHERE created_by = $1',
      [userId],
    );
    return rows[0].n;
  }

  findByCreator(userId: number, limit: number, offset: number): Promise<MyPhotoRow[]> {
    return this.db.query<MyPhotoRow[]>(
      `SELECT p.id, p.caption, p.photo_key, p.thumbnail_key, p.status, p.created_at,
              l.id AS library_id, l.slug AS library_slug, l.name AS library_name, l.city AS library_city,
              l.country AS library_country, l.status AS library_status
       FROM library_photos p JOIN libraries l ON l.id = p.library_id
       WHERE p.created_by = $1 ORDER BY p.created_at DESC, p.id DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    );
  }
}
