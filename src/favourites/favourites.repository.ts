import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { PreparedReader } from '../database/prepared-reader.js';
import { LIST_ITEM_COLUMNS } from '../libraries/list-query.js';
import type { ListItemRow } from '../libraries/library.row.js';

/**
 * The statements' parameters ($1 user, $2 limit, $3 offset) as one-row InitPlans, `(SELECT $n::int)`, never bare.
 * PostgreSQL plans a prepared statement with the actual values for its first five executions and then keeps the
 * generic plan only if that is estimated to cost no more than those custom plans. With bare parameters a custom
 * plan, which knows the user's own favourites and the exact LIMIT, was estimated cheaper than the generic plan, so
 * PostgreSQL planned the statement again on every request: at 1M libraries 0.34 ms of planning (the join with
 * `libraries` and its many indexes) for 0.15 ms of execution, most of the favourites page's PostgreSQL CPU (issue
 * 22). An InitPlan's value is unknown to the planner in both kinds of plan, so both get the same estimates and
 * the generic plan is kept; its shape is the same (favourites_user_approved_idx, then 20 probes of libraries_pkey).
 * test/favourites/favourites-plan.e2e-spec.ts holds this.
 */
const USER = '(SELECT $1::int)';

/**
 * A page of a user's approved favourites, most recently favourited first. The page is read from
 * favourites_user_approved_idx (approved favourites only, in this order, `library_id` breaking ties) and stops
 * there; only its own rows join `libraries`.
 */
const APPROVED_FAVOURITES_PAGE = `SELECT ${LIST_ITEM_COLUMNS}, true AS is_favourited
  FROM (SELECT f.library_id, f.created_at FROM favourites f
        WHERE f.user_id = ${USER} AND f.library_approved
        ORDER BY f.created_at DESC, f.library_id DESC LIMIT (SELECT $2::bigint) OFFSET (SELECT $3::bigint)) f
  JOIN libraries l ON l.id = f.library_id
  ORDER BY f.created_at DESC, f.library_id DESC`;

/**
 * How many of the user's favourites are approved: the user's entries of favourites_user_approved_idx. The flag
 * follows the library's status through triggers (migration 1765800000000).
 */
const APPROVED_FAVOURITES_COUNT = `SELECT count(*)::int AS total FROM favourites f
  WHERE f.user_id = ${USER} AND f.library_approved`;

/** The count and the page in one statement ($1 user, $2 limit, $3 offset): see countAndFindApproved. */
export const APPROVED_FAVOURITES_COUNT_AND_PAGE = `SELECT t.total, p.* FROM (${APPROVED_FAVOURITES_COUNT}) t
       LEFT JOIN (${APPROVED_FAVOURITES_PAGE}) p ON true`;

@Injectable()
export class FavouritesRepository {
  constructor(
    private readonly db: Database,
    private readonly reader: PreparedReader,
  ) {}

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
   * round trip instead of two); no rows when the page is past the end. Prepared, and kept on its generic plan (see
   * USER): planning the joins with `libraries` was most of its PostgreSQL CPU (issue 22).
   */
  async countAndFindApproved(
    userId: number,
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: ListItemRow[] }> {
    const result = await this.reader.read<ListItemRow & { total: number }>(
      APPROVED_FAVOURITES_COUNT_AND_PAGE,
      [userId, limit, offset],
    );
    return { total: result[0].total, rows: result.filter((row) => row.id !== null) };
  }

  /** The user's favourites that are still approved, most recently favourited first. */
  findApproved(userId: number, limit: number, offset: number): Promise<ListItemRow[]> {
    return this.reader.read<ListItemRow>(APPROVED_FAVOURITES_PAGE, [userId, limit, offset]);
  }
}
