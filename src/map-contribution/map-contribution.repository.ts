import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import {
  CONTRIBUTION_COLUMNS,
  LIBRARY_COLUMNS,
  LIBRARY_WITH_RECORD,
  withRecord,
  type ContributionLibraryRow,
  type ContributionRow,
  type LibraryWithRecord,
  type NewEvent,
} from './contribution-rows.js';
import type { CandidateSnapshot, ContributionStatus, ElementType } from './domain/types.js';

type Runner = Pick<EntityManager, 'query'>;

/** A column change of a transition; JSON columns are serialised. */
type Change = [column: string, value: unknown];

const JSON_COLUMNS = new Set(['duplicate_candidates', 'resolved_different']);

/** PostgreSQL `lock_not_available` (55P03): a NOWAIT lock met a holder. */
function isLockNotAvailable(error: QueryFailedError): boolean {
  return (error.driverError as { code?: string } | undefined)?.code === '55P03';
}

/**
 * The contribution records: joined reads of a library with its record, the locks of the write claim, and the
 * workflow's transitions, each named for the step it stores (no generic partial update).
 */
@Injectable()
export class MapContributionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  private runner(manager?: EntityManager): Runner {
    return manager ?? this.dataSource;
  }

  /** The library row alone; with `lock`, locked for the rest of the caller's transaction (the write claim). */
  async findLibrary(
    slug: string,
    manager?: EntityManager,
    lock = false,
  ): Promise<ContributionLibraryRow | null> {
    const rows = await this.runner(manager).query(
      `SELECT ${LIBRARY_COLUMNS} FROM libraries l WHERE l.slug = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [slug],
    );
    return (rows as ContributionLibraryRow[])[0] ?? null;
  }

  /** A library and its record in one read (a read never creates a record), or null when no library has the slug. */
  async findLibraryWithRecord(slug: string): Promise<LibraryWithRecord | null> {
    const rows = await this.dataSource.query(`${LIBRARY_WITH_RECORD} WHERE l.slug = $1`, [slug]);
    const row = (rows as (ContributionLibraryRow & { record: ContributionRow | null })[])[0];
    return row ? withRecord(row) : null;
  }

  /** Several libraries with their records in one read, in the order of `slugs`; a missing slug is left out. */
  async findLibrariesWithRecords(slugs: string[]): Promise<LibraryWithRecord[]> {
    const rows = (await this.dataSource.query(`${LIBRARY_WITH_RECORD} WHERE l.slug = ANY($1)`, [
      slugs,
    ])) as (ContributionLibraryRow & { record: ContributionRow | null })[];
    const bySlug = new Map(rows.map((row) => [row.slug, withRecord(row)]));
    return slugs.flatMap((slug) => bySlug.get(slug) ?? []);
  }

  /**
   * Libraries the workflow can concern: those whose submitter opted in, and any with a record. (Everything else
   * is ineligible by the permission rule alone, so filters need not look at it.)
   */
  async findCandidates(): Promise<LibraryWithRecord[]> {
    const rows = await this.dataSource.query(
      `${LIBRARY_WITH_RECORD}
       WHERE l.mapdb_submission_allowed OR rec.id IS NOT NULL
       ORDER BY l.created_at DESC, l.id DESC`,
    );
    return (rows as (ContributionLibraryRow & { record: ContributionRow | null })[]).map(
      withRecord,
    );
  }

  /** The record of a library, or null when it has none (never created by a read). */
  async findRecord(libraryId: number): Promise<ContributionRow | null> {
    const rows = await this.dataSource.query(
      `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
       WHERE c.library_id = $1`,
      [libraryId],
    );
    return (rows as ContributionRow[])[0] ?? null;
  }

  /** The records of several libraries in one read, by library id. */
  async findRecords(libraryIds: number[]): Promise<Map<number, ContributionRow>> {
    const rows = (await this.dataSource.query(
      `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
       WHERE c.library_id = ANY($1)`,
      [libraryIds],
    )) as ContributionRow[];
    return new Map(rows.map((row) => [row.library_id, row]));
  }

  /** The record locked for the rest of the caller's transaction, or null when the library has none. */
  async lockRecord(manager: EntityManager, libraryId: number): Promise<ContributionRow | null> {
    const rows = await manager.query(
      `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
       WHERE c.library_id = $1 FOR UPDATE OF c`,
      [libraryId],
    );
    return (rows as ContributionRow[])[0] ?? null;
  }

  /**
   * The record locked for the rest of the caller's transaction, created (unchecked) first when the library has
   * none: only the transactions that record something about a library create its record.
   */
  async lockOrCreateRecord(manager: EntityManager, libraryId: number): Promise<ContributionRow> {
    const existing = await this.lockRecord(manager, libraryId);
    if (existing) return existing;
    await manager.query(
      'INSERT INTO map_contributions (library_id) VALUES ($1) ON CONFLICT (library_id) DO NOTHING',
      [libraryId],
    );
    return (await this.lockRecord(manager, libraryId))!;
  }

  /**
   * The record locked for the rest of the caller's transaction without waiting: `locked` when another transaction
   * holds it (a reconciliation storing its outcome), null when the library has no record.
   */
  async lockRecordNoWait(
    manager: EntityManager,
    libraryId: number,
  ): Promise<ContributionRow | null | 'locked'> {
    try {
      const rows = await manager.query(
        `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
         WHERE c.library_id = $1 FOR UPDATE OF c NOWAIT`,
        [libraryId],
      );
      return (rows as ContributionRow[])[0] ?? null;
    } catch (error) {
      if (error instanceof QueryFailedError && isLockNotAvailable(error)) return 'locked';
      throw error;
    }
  }

  /** Element keys (`node/123`) already linked to a library other than `libraryId`. */
  async linkedElements(libraryId: number, manager?: EntityManager): Promise<Set<string>> {
    const rows: { key: string }[] = await this.runner(manager).query(
      `SELECT mapdb_element_type || '/' || mapdb_element_id AS key FROM map_contributions
       WHERE mapdb_element_id IS NOT NULL AND library_id <> $1`,
      [libraryId],
    );
    return new Set(rows.map((row) => row.key));
  }

  // Transitions. Each stores one step of the workflow together with its audit event in a single statement (an
  // UPDATE … RETURNING feeding the event's INSERT), so a step and its event are never half-written.

  /** A completed duplicate check: its outcome, the candidates and the time. */
  recordCheck(
    manager: EntityManager,
    record: ContributionRow,
    check: { status: ContributionStatus; checkedAt: Date; candidates: CandidateSnapshot[] },
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['status', check.status],
        ['checked_at', check.checkedAt],
        ['last_check_failed', false],
        ['duplicate_candidates', check.candidates],
        ['last_error_code', ''],
        ['last_error_message', ''],
      ],
      event,
    );
  }

  /** A duplicate check that could not complete (the status stays; the failure blocks writes). */
  recordCheckFailure(
    manager: EntityManager,
    record: ContributionRow,
    failure: { code: string; message: string },
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['last_check_failed', true],
        ['last_error_code', failure.code],
        ['last_error_message', failure.message],
      ],
      event,
    );
  }

  /** Staff resolved a candidate as the same feature: the existing element is linked. */
  markSameFeature(
    manager: EntityManager,
    record: ContributionRow,
    status: ContributionStatus,
    element: { type: ElementType; id: number },
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['status', status],
        ['mapdb_element_type', element.type],
        ['mapdb_element_id', element.id],
      ],
      event,
    );
  }

  /** Staff resolved candidates as different features (a fresh check is still needed). */
  markDifferentFeatures(
    manager: EntityManager,
    record: ContributionRow,
    status: ContributionStatus,
    resolvedDifferent: string[],
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['status', status],
        ['resolved_different', resolvedDifferent],
      ],
      event,
    );
  }

  /** Step (2) of the write order: status submitting under the attempt's key, with its write_started event. */
  markSubmitting(
    manager: EntityManager,
    record: ContributionRow,
    status: ContributionStatus,
    attemptKey: string,
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['status', status],
        ['last_attempt_key', attemptKey],
        ['last_error_code', ''],
        ['last_error_message', ''],
      ],
      event,
    );
  }

  /** Step (3): the changeset id of every record the changeset serves, persisted as soon as it is known. */
  async markChangeset(recordIds: number[], changesetId: number): Promise<void> {
    await this.dataSource.query(
      'UPDATE map_contributions SET changeset_id = $1, updated_at = now() WHERE id = ANY($2)',
      [changesetId, recordIds],
    );
  }

  /** Step (5): the created node's id, persisted at once. */
  async markNodeCreated(recordId: number, nodeId: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE map_contributions SET mapdb_element_type = 'node', mapdb_element_id = $1, updated_at = now()
       WHERE id = $2`,
      [nodeId, recordId],
    );
  }

  /** The write succeeded: contributed, by whom and when. */
  markWritten(
    record: ContributionRow,
    status: ContributionStatus,
    by: { id: number; at: Date },
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      undefined,
      record,
      [
        ['status', status],
        ['contributed_at', by.at],
        ['contributed_by', by.id],
      ],
      event,
    );
  }

  /** The write failed or its outcome is unknown: reconciliation is required before anything else. */
  markFailed(
    record: ContributionRow,
    status: ContributionStatus,
    error: { code: string; message: string },
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      undefined,
      record,
      [
        ['status', status],
        ['last_error_code', error.code],
        ['last_error_message', error.message],
      ],
      event,
    );
  }

  /** A reconciliation could not read the changeset: the record stays as it is, with the error. */
  markReconcileFailed(
    manager: EntityManager,
    record: ContributionRow,
    code: string,
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['last_error_code', code],
        ['last_error_message', 'Reconciliation could not read the changeset.'],
      ],
      event,
    );
  }

  /** Reconciliation found this library's node in the changeset: it is linked. */
  markReconciledFound(
    manager: EntityManager,
    record: ContributionRow,
    status: ContributionStatus,
    found: { nodeId: number; by: number; at: Date },
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['status', status],
        ['mapdb_element_type', 'node'],
        ['mapdb_element_id', found.nodeId],
        ['contributed_at', found.at],
        ['contributed_by', found.by],
        ['last_error_code', ''],
        ['last_error_message', ''],
      ],
      event,
    );
  }

  /** Reconciliation found nothing created: back to unchecked, with nothing linked. */
  markReconciledAbsent(
    manager: EntityManager,
    record: ContributionRow,
    status: ContributionStatus,
    event: NewEvent,
  ): Promise<void> {
    return this.change(
      manager,
      record,
      [
        ['status', status],
        ['mapdb_element_type', null],
        ['mapdb_element_id', null],
        ['changeset_id', null],
        ['checked_at', null],
        ['duplicate_candidates', []],
      ],
      event,
    );
  }

  /** An event that changes nothing on the record (an unclear resolution, a permission withdrawal). */
  async addEvent(
    manager: EntityManager | undefined,
    record: ContributionRow,
    event: NewEvent,
  ): Promise<void> {
    const params = [record.id, record.library_id, ...this.eventParams(event)];
    await this.runner(manager).query(
      `INSERT INTO map_contribution_events
         (contribution_id, library_id, event_type, outcome, actor_id, actor_username, attempt_key, details,
          created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      params,
    );
  }

  /** One UPDATE of the record and the INSERT of its event, as a single statement. */
  private async change(
    manager: EntityManager | undefined,
    record: ContributionRow,
    changes: Change[],
    event: NewEvent,
  ): Promise<void> {
    const params: unknown[] = [];
    const sets = changes.map(([column, value]) => {
      params.push(JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);
      return `${column} = $${params.length}`;
    });
    params.push(record.id);
    const id = params.length;
    const first = params.length + 1;
    params.push(...this.eventParams(event));
    await this.runner(manager).query(
      `WITH changed AS (
         UPDATE map_contributions SET ${sets.join(', ')}, updated_at = now() WHERE id = $${id}
         RETURNING id, library_id
       )
       INSERT INTO map_contribution_events
         (contribution_id, library_id, event_type, outcome, actor_id, actor_username, attempt_key, details,
          created_at)
       SELECT id, library_id, $${first}::varchar, $${first + 1}::varchar, $${first + 2}::int,
              $${first + 3}::varchar, $${first + 4}::uuid, $${first + 5}::jsonb, $${first + 6}::timestamptz
       FROM changed`,
      params,
    );
  }

  private eventParams(event: NewEvent): unknown[] {
    return [
      event.type,
      event.outcome,
      event.actor?.id ?? null,
      event.actor?.username ?? null,
      event.attemptKey ?? null,
      JSON.stringify(event.details ?? {}),
      // The app's clock, as for every other time the workflow records (checked_at, contributed_at, …).
      event.at ?? this.clock.date(),
    ];
  }

  async withdrawPermission(manager: EntityManager, libraryId: number): Promise<boolean> {
    const rows = await manager.query(
      `UPDATE libraries SET mapdb_submission_allowed = false, mapdb_submission_allowed_at = NULL, updated_at = now()
       WHERE id = $1 AND mapdb_submission_allowed RETURNING id`,
      [libraryId],
    );
    return (rows as [unknown[], number])[0].length > 0;
  }

  /** Serialises write claims across the whole service: one in-flight write at a time. */
  async lockWrites(manager: EntityManager): Promise<void> {
    await manager.query("SELECT pg_advisory_xact_lock(hashtext('map-contribution-writes'))");
  }

  async anySubmitting(manager: EntityManager): Promise<boolean> {
    const rows = await manager.query(
      "SELECT 1 FROM map_contributions WHERE status = 'submitting' LIMIT 1",
    );
    return (rows as unknown[]).length > 0;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
