import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  actorLibraryConditions,
  whereClause,
  type ActorLibraryFilter,
} from '../moderation-audit/audit-filter.js';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import type { CandidateSnapshot, ContributionStatus, ElementType } from './domain/types.js';

export interface ContributionRow {
  id: number;
  library_id: number;
  status: ContributionStatus;
  checked_at: Date | null;
  last_check_failed: boolean;
  duplicate_candidates: CandidateSnapshot[];
  resolved_different: string[];
  mapdb_element_type: ElementType | null;
  mapdb_element_id: string | null;
  changeset_id: string | null;
  contributed_at: Date | null;
  contributed_by: number | null;
  contributed_by_username: string | null;
  last_attempt_key: string | null;
  last_error_code: string;
  last_error_message: string;
}

/** The library columns the workflow reads (eligibility, tags, position). */
export interface ContributionLibraryRow {
  id: number;
  slug: string;
  name: string;
  description: string;
  address: string;
  city: string;
  country: string;
  status: 'pending' | 'approved' | 'rejected';
  submission_origin: 'legacy' | 'user' | 'staff' | 'import';
  created_by: number | null;
  mapdb_submission_allowed: boolean;
  source: string;
  external_id: string;
  pending_changes: unknown;
  pending_photo: unknown;
  lat: number;
  lng: number;
  capacity: number | null;
  is_indoor: boolean | null;
  is_lit: boolean | null;
  wheelchair_accessible: '' | 'yes' | 'no' | 'limited';
  brand: string;
  operator: string;
  website: string;
  ai_generated_fields: string[];
}

export interface EventRow {
  event_type: string;
  outcome: string;
  actor_id: number | null;
  actor_username: string | null;
  attempt_key: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

/** An event of the whole history, with the library it concerns (null once the library was deleted). */
export interface HistoryEventRow extends EventRow {
  library_slug: string | null;
  library_name: string | null;
}

/** Filters of the history: the staff member's username (case-insensitive) and the library's slug. */
export type HistoryFilter = ActorLibraryFilter;

function historyWhere(filter: HistoryFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  return { where: whereClause(actorLibraryConditions(filter, params)), params };
}

export interface NewEvent {
  type: string;
  outcome: string;
  actor: { id: number; username: string } | null;
  attemptKey?: string | null;
  details?: Record<string, unknown>;
  /** When it happened (the injected clock); the database's now() when omitted. */
  at?: Date;
}

const LIBRARY_COLUMNS = `l.id, l.slug, l.name, l.description, l.address, l.city, l.country, l.status, l.submission_origin,
  l.created_by, l.mapdb_submission_allowed, l.source, l.external_id, l.pending_changes, l.pending_photo,
  ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lng, l.capacity, l.is_indoor, l.is_lit,
  l.wheelchair_accessible, l.brand, l.operator, l.website, l.ai_generated_fields`;

const CONTRIBUTION_COLUMNS = `c.id, c.library_id, c.status, c.checked_at, c.last_check_failed, c.duplicate_candidates,
  c.resolved_different, c.mapdb_element_type, c.mapdb_element_id::text AS mapdb_element_id,
  c.changeset_id::text AS changeset_id, c.contributed_at, c.contributed_by, u.username AS contributed_by_username,
  c.last_attempt_key, c.last_error_code, c.last_error_message`;

type Runner = Pick<EntityManager, 'query'>;

/** PostgreSQL `lock_not_available` (55P03): a NOWAIT lock met a holder. */
function isLockNotAvailable(error: { driverError: unknown }): boolean {
  return (error.driverError as { code?: string } | undefined)?.code === '55P03';
}

interface WriteStateRow {
  token_fingerprint: string;
  write_api_allowed: boolean;
  permissions_checked_at: Date | null;
  disabled_at: Date | null;
  disabled_reason: string;
}

@Injectable()
export class MapContributionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  private runner(manager?: EntityManager): Runner {
    return manager ?? this.dataSource;
  }

  async findLibrary(
    slug: string,
    manager?: EntityManager,
    lock = false,
  ): Promise<ContributionLibraryRow | null> {
    const rows: unknown = await this.runner(manager).query(
      `SELECT ${LIBRARY_COLUMNS} FROM libraries l WHERE l.slug = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [slug],
    );
    return (rows as ContributionLibraryRow[])[0] ?? null;
  }

  /**
   * The record of a library, created (unchecked) on first use. With `lock`, the row is locked for the rest of
   * the caller's transaction.
   */
  async record(libraryId: number, manager?: EntityManager, lock = false): Promise<ContributionRow> {
    const runner = this.runner(manager);
    await runner.query(
      'INSERT INTO map_contributions (library_id) VALUES ($1) ON CONFLICT (library_id) DO NOTHING',
      [libraryId],
    );
    const rows: unknown = await runner.query(
      `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
       WHERE c.library_id = $1 ${lock ? 'FOR UPDATE OF c' : ''}`,
      [libraryId],
    );
    return (rows as ContributionRow[])[0];
  }

  /**
   * The record locked for the rest of the caller's transaction without waiting: `locked` when another transaction
   * holds it (a reconciliation in progress), null when the library has no record.
   */
  async lockRecordNoWait(
    libraryId: number,
    manager: EntityManager,
  ): Promise<ContributionRow | null | 'locked'> {
    try {
      const rows: unknown = await manager.query(
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

  async findRecord(libraryId: number): Promise<ContributionRow | null> {
    const rows: unknown = await this.dataSource.query(
      `SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
       WHERE c.library_id = $1`,
      [libraryId],
    );
    return (rows as ContributionRow[])[0] ?? null;
  }

  /**
   * Libraries the workflow can concern: those whose submitter opted in, and any with a record. (Everything else
   * is ineligible by the permission rule alone, so filters need not look at it.)
   */
  async findCandidates(): Promise<
    { library: ContributionLibraryRow; record: ContributionRow | null }[]
  > {
    const rows: unknown = await this.dataSource.query(
      `SELECT ${LIBRARY_COLUMNS}, to_jsonb(rec) AS record
       FROM libraries l
       LEFT JOIN LATERAL (
         SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
         WHERE c.library_id = l.id
       ) rec ON true
       WHERE l.mapdb_submission_allowed OR rec.id IS NOT NULL
       ORDER BY l.created_at DESC, l.id DESC`,
    );
    return (rows as (ContributionLibraryRow & { record: ContributionRow | null })[]).map(
      ({ record, ...library }) => ({
        library,
        record: record
          ? {
              ...record,
              checked_at: record.checked_at ? new Date(record.checked_at) : null,
              contributed_at: record.contributed_at ? new Date(record.contributed_at) : null,
            }
          : null,
      }),
    );
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

  async update(
    manager: EntityManager | undefined,
    id: number,
    values: Partial<{
      status: ContributionStatus;
      checked_at: Date | null;
      last_check_failed: boolean;
      duplicate_candidates: CandidateSnapshot[];
      resolved_different: string[];
      mapdb_element_type: ElementType | null;
      mapdb_element_id: number | null;
      changeset_id: number | null;
      contributed_at: Date | null;
      contributed_by: number | null;
      last_attempt_key: string | null;
      last_error_code: string;
      last_error_message: string;
    }>,
  ): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const [column, value] of Object.entries(values)) {
      const json = column === 'duplicate_candidates' || column === 'resolved_different';
      params.push(json ? JSON.stringify(value) : value);
      sets.push(`${column} = $${params.length}`);
    }
    params.push(id);
    await this.runner(manager).query(
      `UPDATE map_contributions SET ${sets.join(', ')}, updated_at = now() WHERE id = $${params.length}`,
      params,
    );
  }

  async addEvent(
    manager: EntityManager | undefined,
    record: ContributionRow,
    event: NewEvent,
  ): Promise<void> {
    await this.runner(manager).query(
      `INSERT INTO map_contribution_events
         (contribution_id, library_id, event_type, outcome, actor_id, actor_username, attempt_key, details,
          created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        record.id,
        record.library_id,
        event.type,
        event.outcome,
        event.actor?.id ?? null,
        event.actor?.username ?? null,
        event.attemptKey ?? null,
        JSON.stringify(event.details ?? {}),
        // The app's clock, as for every other time the workflow records (checked_at, contributed_at, …).
        event.at ?? this.clock.date(),
      ],
    );
  }

  /** The record's most recent write_started event (time and exact payload), or null. */
  async lastWriteStarted(
    recordId: number,
    manager?: EntityManager,
  ): Promise<{ created_at: Date; details: Record<string, unknown> } | null> {
    const rows: { created_at: Date; details: Record<string, unknown> }[] = await this.runner(
      manager,
    ).query(
      `SELECT created_at, details FROM map_contribution_events
       WHERE contribution_id = $1 AND event_type = 'write_started' ORDER BY id DESC LIMIT 1`,
      [recordId],
    );
    return rows[0] ?? null;
  }

  events(recordId: number): Promise<EventRow[]> {
    return this.dataSource.query(
      `SELECT event_type, outcome, actor_id, actor_username, attempt_key, details, created_at
       FROM map_contribution_events WHERE contribution_id = $1 ORDER BY id`,
      [recordId],
    );
  }

  async countAllEvents(filter: HistoryFilter = {}): Promise<number> {
    const { where, params } = historyWhere(filter);
    const rows = await this.dataSource.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM map_contribution_events e ${where}`,
      params,
    );
    return rows[0].count;
  }

  /** The whole audit history (or one actor's, one library's), newest first. */
  allEvents(limit: number, offset: number, filter: HistoryFilter = {}): Promise<HistoryEventRow[]> {
    const { where, params } = historyWhere(filter);
    return this.dataSource.query(
      `SELECT e.event_type, e.outcome, e.actor_id, e.actor_username, e.attempt_key, e.details, e.created_at,
              l.slug AS library_slug, l.name AS library_name
         FROM map_contribution_events e
         LEFT JOIN libraries l ON l.id = e.library_id
        ${where}
        ORDER BY e.id DESC
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }

  async withdrawPermission(manager: EntityManager, libraryId: number): Promise<boolean> {
    const rows: unknown = await manager.query(
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
    const rows: unknown = await manager.query(
      "SELECT 1 FROM map_contributions WHERE status = 'submitting' LIMIT 1",
    );
    return (rows as unknown[]).length > 0;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** With `manager`, read on the caller's transaction (never a second pool connection while one is held). */
  async writeState(manager?: EntityManager): Promise<WriteStateRow | null> {
    const rows = await this.runner(manager).query<WriteStateRow[]>(
      'SELECT * FROM map_write_state WHERE id = 1',
    );
    return rows[0] ?? null;
  }

  async saveWriteState(values: {
    token_fingerprint: string;
    write_api_allowed: boolean;
    permissions_checked_at: Date | null;
    disabled_at: Date | null;
    disabled_reason: string;
  }): Promise<void> {
    await this.dataSource.query(
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
