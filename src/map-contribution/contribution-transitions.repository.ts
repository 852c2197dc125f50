import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { Database, type Sql, type Transaction } from '../database/database.js';
import type { ContributionRow, NewEvent } from './contribution-rows.js';
import type { CandidateSnapshot, ContributionStatus, ElementType } from './domain/types.js';

/** The columns of a record a transition sets (ids as numbers; the JSON columns are serialised). */
type RecordChanges = Partial<
  Omit<
    ContributionRow,
    'id' | 'library_id' | 'contributed_by_username' | 'mapdb_element_id' | 'changeset_id'
  > & { mapdb_element_id: number | null; changeset_id: number | null }
>;

const JSON_COLUMNS = new Set<string>(['duplicate_candidates', 'resolved_different']);

/** An outcome or a failure as the record keeps it (the last error; empty strings when none). */
const lastError = (error: { code: string; message: string }): RecordChanges => ({
  last_error_code: error.code,
  last_error_message: error.message,
});
const NO_ERROR = lastError({ code: '', message: '' });

const EVENT_COLUMNS = `(contribution_id, library_id, event_type, outcome, actor_id, actor_username, attempt_key,
  details, created_at)`;

/**
 * The workflow's steps as the repository stores them, each named for its intent (no generic partial update). The
 * status a step moves to is the caller's (`domain/state-machine.ts` decides it). Each step that changes the record
 * stores the change together with its audit event in a single statement (an UPDATE … RETURNING feeding the event's
 * INSERT), so a step and its event are never half-written.
 */
@Injectable()
export class ContributionTransitions {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** A completed duplicate check: its outcome, the candidates and the time. */
  recordCheck(
    tx: Transaction,
    record: ContributionRow,
    check: { status: ContributionStatus; checkedAt: Date; candidates: CandidateSnapshot[] },
    event: NewEvent,
  ): Promise<void> {
    const { status, checkedAt: checked_at, candidates: duplicate_candidates } = check;
    const changes = { status, checked_at, last_check_failed: false, duplicate_candidates };
    return this.change(tx, record, event, { ...changes, ...NO_ERROR });
  }

  /** A duplicate check that could not complete (the status stays; the failure blocks writes). */
  recordCheckFailure(
    tx: Transaction,
    record: ContributionRow,
    failure: { code: string; message: string },
    event: NewEvent,
  ): Promise<void> {
    return this.change(tx, record, event, { last_check_failed: true, ...lastError(failure) });
  }

  /** Staff resolved a candidate as the same feature: the existing element is linked. */
  markSameFeature(
    tx: Transaction,
    record: ContributionRow,
    status: ContributionStatus,
    element: { type: ElementType; id: number },
    event: NewEvent,
  ): Promise<void> {
    const { type: mapdb_element_type, id: mapdb_element_id } = element;
    return this.change(tx, record, event, { status, mapdb_element_type, mapdb_element_id });
  }

  /** Staff resolved candidates as different features (a fresh check is still needed). */
  markDifferentFeatures(
    tx: Transaction,
    record: ContributionRow,
    status: ContributionStatus,
    resolvedDifferent: string[],
    event: NewEvent,
  ): Promise<void> {
    return this.change(tx, record, event, { status, resolved_different: resolvedDifferent });
  }

  /** Step (2) of the write order: status submitting under the attempt's key, with its write_started event. */
  markSubmitting(
    tx: Transaction,
    record: ContributionRow,
    status: ContributionStatus,
    attemptKey: string,
    event: NewEvent,
  ): Promise<void> {
    return this.change(tx, record, event, { status, last_attempt_key: attemptKey, ...NO_ERROR });
  }

  /** Step (3): the changeset id of every record the changeset serves, persisted as soon as it is known. */
  async markChangeset(recordIds: number[], changesetId: number): Promise<void> {
    await this.db.query(
      'UPDATE map_contributions SET changeset_id = $1, updated_at = now() WHERE id = ANY($2)',
      [changesetId, recordIds],
    );
  }

  /** Step (5): the created node's id, persisted at once. */
  async markNodeCreated(recordId: number, nodeId: number): Promise<void> {
    await this.db.query(
      `UPDATE map_contributions SET mapdb_element_type = 'node', mapdb_element_id = $1, updated_at = now()
       WHERE id = $2`,
      [nodeId, recordId],
    );
  }

  /** The write succeeded: contributed, by whom and when (no transaction: the write's steps are each final). */
  markWritten(
    record: ContributionRow,
    status: ContributionStatus,
    by: { id: number; at: Date },
    event: NewEvent,
  ): Promise<void> {
    const changes = { status, contributed_at: by.at, contributed_by: by.id };
    return this.change(this.db, record, event, changes);
  }

  /** The write failed or its outcome is unknown: reconciliation is required before anything else. */
  markFailed(
    record: ContributionRow,
    status: ContributionStatus,
    error: { code: string; message: string },
    event: NewEvent,
  ): Promise<void> {
    return this.change(this.db, record, event, { status, ...lastError(error) });
  }

  /** A reconciliation could not read the changeset: the record stays as it is, with the error. */
  markReconcileFailed(
    tx: Transaction,
    record: ContributionRow,
    code: string,
    event: NewEvent,
  ): Promise<void> {
    const message = 'Reconciliation could not read the changeset.';
    return this.change(tx, record, event, lastError({ code, message }));
  }

  /** Reconciliation found this library's node in the changeset: it is linked. */
  markReconciledFound(
    tx: Transaction,
    record: ContributionRow,
    status: ContributionStatus,
    found: { nodeId: number; by: number; at: Date },
    event: NewEvent,
  ): Promise<void> {
    const linked = { mapdb_element_type: 'node' as const, mapdb_element_id: found.nodeId };
    const contributed = { contributed_at: found.at, contributed_by: found.by };
    return this.change(tx, record, event, { status, ...linked, ...contributed, ...NO_ERROR });
  }

  /** Reconciliation found nothing created: back to unchecked, with nothing linked. */
  markReconciledAbsent(
    tx: Transaction,
    record: ContributionRow,
    status: ContributionStatus,
    event: NewEvent,
  ): Promise<void> {
    return this.change(tx, record, event, {
      status,
      mapdb_element_type: null,
      mapdb_element_id: null,
      changeset_id: null,
      checked_at: null,
      duplicate_candidates: [],
    });
  }

  /** An event that changes nothing on the record (an unclear resolution, a permission withdrawal). */
  async addEvent(tx: Transaction, record: ContributionRow, event: NewEvent): Promise<void> {
    const params = [record.id, record.library_id, ...this.eventParams(event)];
    await tx.query(
      `INSERT INTO map_contribution_events ${EVENT_COLUMNS}
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      params,
    );
  }

  /** One UPDATE of the record and the INSERT of its event, as a single statement. */
  private async change(
    sql: Sql,
    record: ContributionRow,
    event: NewEvent,
    changes: RecordChanges,
  ): Promise<void> {
    const params: unknown[] = [];
    const sets = Object.entries(changes).map(([column, value]) => {
      params.push(JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);
      return `${column} = $${params.length}`;
    });
    params.push(record.id);
    const id = params.length;
    const first = params.length + 1;
    params.push(...this.eventParams(event));
    await sql.query(
      `WITH changed AS (
         UPDATE map_contributions SET ${sets.join(', ')}, updated_at = now() WHERE id = $${id}
         RETURNING id, library_id
       )
       INSERT INTO map_contribution_events ${EVENT_COLUMNS}
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
}
