import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import type { ContributionRow, NewEvent } from './contribution-rows.js';
import type { CandidateSnapshot, ContributionStatus, ElementType } from './domain/types.js';

type Runner = Pick<EntityManager, 'query'>;

/** A column change of a transition; JSON columns are serialised. */
type Change = [column: string, value: unknown];

const JSON_COLUMNS = new Set(['duplicate_candidates', 'resolved_different']);

/**
 * The workflow's steps as the repository stores them, each named for its intent (no generic partial update). The
 * status a step moves to is the caller's (`domain/state-machine.ts` decides it).
 */
@Injectable()
export class ContributionTransitions {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  private runner(manager?: EntityManager): Runner {
    return manager ?? this.dataSource;
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
}
