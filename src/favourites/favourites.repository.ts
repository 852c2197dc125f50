import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { LIBRARY_COLUMNS } from '../libraries/libraries.repository.js';
import type { LibraryRow } from '../libraries/library.row.js';

/** A page of a user's approved favourites ($1 user, $2 limit, $3 offset), most recently favourited first. */
const APPROVED_FAVOURITES_PAGE = `SELECT ${LIBRARY_COLUMNS}, true AS is_favourited
  FROM favourites f JOIN libraries l ON l.id = f.library_id
  WHERE f.user_id = $1 AND l.status = 'approved'
  ORDER BY f.created_at DESC, l.id DESC LIMIT $2 OFFSET $3`;

@Injectable()
export class FavouritesRepository {
  constructor(private readonly db: Database) {}

  /** Adds the favourite; false when it already existed (concurrent adds leave exactly one row). */
  async add(userId: number, libraryId: number): Promise<boolean> {
    const rows = await this.db.query<{ user_id: number }[]>(
      `INSERT INTO favourites (user_id, library_id) VALUES ($1, $2)
       ON CONFLICT (user_id, library_id) DO NOTHING RETURNING user_id`,
      [userId, libraryId],
    );
    return rows.length === 1;
  }

  async remove(userId: number, libraryId: number): Promise<void> {
    await this.db.query('DELETE FROM favourites WHERE user_id = $1 AND library_id = $2', [
      userId,
      libraryId,
    ]);
  }

  /**
   * How many of the user's favourites are still approved, and the page of them at `offset`, in one statement (one
   * round trip instead of two); no rows when the page is past the end.
   */
  async countAndFindApproved(
    userId: number,
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: LibraryRow[] }> {
    const result = await this.db.query<(LibraryRow & { total: number })[]>(
      `SELECT t.total, p.* FROM (
         SELECT count(*)::int AS total FROM favourites f JOIN libraries l ON l.id = f.library_id
         WHERE f.user_id = $1 AND l.status = 'approved') t
       LEFT JOIN (${APPROVED_FAVOURITES_PAGE}) p ON true`,
      [userId, limit, offset],
    );
    return { total: result[0].total, rows: result.filter((row) => row.id !== null) };
  }

  /** The user's favourites that are still approved, most recently favourited first. */
  findApproved(userId: number, limit: number, offset: number): Promise<LibraryRow[]> {
    return this.db.query<LibraryRow[]>(APPROVED_FAVOURITES_PAGE, [userId, limit, offset]);
  }
}
