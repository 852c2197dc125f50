import { Injectable } from '@nestjs/common';
import { Database, type Sql, type Transaction } from '../database/database.js';
import { sqlErrorOf, SQLSTATE } from '../database/sql-error.js';
import {
  CONTRIBUTION_COLUMNS,
  LIBRARY_COLUMNS,
  LIBRARY_WITH_RECORD,
  withRecord,
  type ContributionLibraryRow,
  type ContributionRow,
  type LibraryWithRecord,
} from './contribution-rows.js';

/** A library row with its record as one JSON column (LIBRARY_WITH_RECORD). */
type JoinedRow = ContributionLibraryRow & { record: ContributionRow | null };

/** The record's columns with its contributor's name ($1: the library's id). */
const RECORD_OF_LIBRARY = `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c
  LEFT JOIN users u ON u.id = c.contributed_by WHERE c.library_id = $1`;

/**
 * The contribution records: joined reads of a library with its record, and the locks of the write claim. The
 * workflow's steps are stored by ContributionTransitions.
 */
@Injectable()
export class MapContributionRepository {
  constructor(private readonly db: Database) {}

  /** The library row alone; with `lock`, locked for the rest of the caller's transaction (the write claim). */
  async findLibrary(
    slug: string,
    tx?: Transaction,
    lock = false,
  ): Promise<ContributionLibraryRow | null> {
    const rows = await (tx ?? this.db).query<ContributionLibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS} FROM libraries l WHERE l.slug = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [slug],
    );
    return rows[0] ?? null;
  }

  /** A library and its record in one read (a read never creates a record), or null when no library has the slug. */
  async findLibraryWithRecord(slug: string): Promise<LibraryWithRecord | null> {
    const rows = await this.db.query<JoinedRow[]>(`${LIBRARY_WITH_RECORD} WHERE l.slug = $1`, [
      slug,
    ]);
    const row = rows[0];
    return row ? withRecord(row) : null;
  }

  /** Several libraries with their records in one read, in the order of `slugs`; a missing slug is left out. */
  async findLibrariesWithRecords(slugs: string[]): Promise<LibraryWithRecord[]> {
    const rows = await this.db.query<JoinedRow[]>(`${LIBRARY_WITH_RECORD} WHERE l.slug = ANY($1)`, [
      slugs,
    ]);
    const bySlug = new Map(rows.map((row) => [row.slug, withRecord(row)]));
    return slugs.flatMap((slug) => bySlug.get(slug) ?? []);
  }

  /**
   * Libraries the workflow can concern: those whose submitter opted in, and any with a record. (Everything else
   * is ineligible by the permission rule alone, so filters need not look at it.)
   */
  async findCandidates(): Promise<LibraryWithRecord[]> {
    const rows = await this.db.query<JoinedRow[]>(
      `${LIBRARY_WITH_RECORD}
       WHERE l.mapdb_submission_allowed OR rec.id IS NOT NULL
       ORDER BY l.created_at DESC, l.id DESC`,
    );
    return rows.map(withRecord);
  }

  /** The record of a library, or null when it has none (never created by a read). */
  async findRecord(libraryId: number): Promise<ContributionRow | null> {
    const rows = await this.db.query<ContributionRow[]>(RECORD_OF_LIBRARY, [libraryId]);
    return rows[0] ?? null;
  }

  /** The records of several libraries in one read, by library id. */
  async findRecords(libraryIds: number[]): Promise<Map<number, ContributionRow>> {
    const rows = await this.db.query<ContributionRow[]>(
      `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
       WHERE c.library_id = ANY($1)`,
      [libraryIds],
    );
    return new Map(rows.map((row) => [row.library_id, row]));
  }

  /** The record locked for the rest of the caller's transaction, or null when the library has none. */
  async lockRecord(tx: Transaction, libraryId: number): Promise<ContributionRow | null> {
    const rows = await tx.query<ContributionRow[]>(`${RECORD_OF_LIBRARY} FOR UPDATE OF c`, [
      libraryId,
    ]);
    return rows[0] ?? null;
  }

  /**
   * The record locked for the rest of the caller's transaction, created (unchecked) first when the library has
   * none: only the transactions that record something about a library create its record.
   */
  async lockOrCreateRecord(tx: Transaction, libraryId: number): Promise<ContributionRow> {
    const existing = await this.lockRecord(tx, libraryId);
    if (existing) return existing;
    await tx.query(
      'INSERT INTO map_contributions (library_id) VALUES ($1) ON CONFLICT (library_id) DO NOTHING',
      [libraryId],
    );
    return (await this.lockRecord(tx, libraryId))!;
  }

  /**
   * The record locked for the rest of the caller's transaction without waiting: `locked` when another transaction
   * holds it (a reconciliation storing its outcome), null when the library has no record.
   */
  async lockRecordNoWait(
    tx: Transaction,
    libraryId: number,
  ): Promise<ContributionRow | null | 'locked'> {
    try {
      const rows = await tx.query<ContributionRow[]>(
        `${RECORD_OF_LIBRARY} FOR UPDATE OF c NOWAIT`,
        [libraryId],
      );
      return rows[0] ?? null;
    } catch (error) {
      if (sqlErrorOf(error)?.code === SQLSTATE.lockNotAvailable) return 'locked';
      throw error;
    }
  }

  /** Element keys (`node/123`) already linked to a library other than `libraryId`. */
  async linkedElements(libraryId: number, sql: Sql = this.db): Promise<Set<string>> {
    const rows: { key: string }[] = await sql.query(
      `SELECT mapdb_element_type || '/' || mapdb_element_id AS key FROM map_contributions
       WHERE mapdb_element_id IS NOT NULL AND library_id <> $1`,
      [libraryId],
    );
    return new Set(rows.map((row) => row.key));
  }

  async withdrawPermission(tx: Transaction, libraryId: number): Promise<boolean> {
    const rows = await tx.query<[unknown[], number]>(
      `UPDATE libraries SET mapdb_submission_allowed = false, mapdb_submission_allowed_at = NULL, updated_at = now()
       WHERE id = $1 AND mapdb_submission_allowed RETURNING id`,
      [libraryId],
    );
    return rows[0].length > 0;
  }

  /** Serialises write claims across the whole service: one in-flight write at a time. */
  async lockWrites(tx: Transaction): Promise<void> {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('map-contribution-writes'))");
  }

  async anySubmitting(tx: Transaction): Promise<boolean> {
    const rows = await tx.query<unknown[]>(
      "SELECT 1 FROM map_contributions WHERE status = 'submitting' LIMIT 1",
    );
    return rows.length > 0;
  }

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
