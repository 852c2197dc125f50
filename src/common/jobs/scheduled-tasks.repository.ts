import { Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';

/** A held claim on a periodic task: only the holder of `leaseId` may renew or release it. */
export interface TaskLease {
  name: string;
  leaseId: string;
}

/**
 * Every query of `scheduled_tasks`: periodic work (the open-data export) that several instances share. A due task
 * is claimed the way enrichment jobs are (`UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED)` plus a lease), so one
 * instance runs it while the others skip the row; a holder that dies loses the task when its lease expires.
 */
@Injectable()
export class ScheduledTasksRepository {
  constructor(private readonly db: Database) {}

  /** Creates the task's row, due at `firstRunAt`, unless it exists. */
  async ensure(name: string, firstRunAt: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO scheduled_tasks (name, next_run_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
      [name, firstRunAt],
    );
  }

  /**
   * Claims the task when it is due (or whenever `force`, for an on-demand run) and no live lease holds it.
   * Returns false when it is not due or another instance holds it.
   */
  async claim(lease: TaskLease, now: Date, leaseUntil: Date, force: boolean): Promise<boolean> {
    const [rows] = await this.db.query<[unknown[], number]>(
      `UPDATE scheduled_tasks AS task
          SET locked_until = $3, lease_id = $2, last_started_at = $4
         FROM (SELECT name FROM scheduled_tasks
                WHERE name = $1
                  AND (next_run_at <= $4 OR $5::boolean)
                  AND (locked_until IS NULL OR locked_until <= $4)
                FOR UPDATE SKIP LOCKED) AS due
        WHERE task.name = due.name
        RETURNING task.name`,
      [lease.name, lease.leaseId, leaseUntil, now, force],
    );
    return rows.length === 1;
  }

  /** Extends a held lease; false when it was lost (expired and taken by another instance). */
  async renew(lease: TaskLease, leaseUntil: Date): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE scheduled_tasks SET locked_until = $3 WHERE name = $1 AND lease_id = $2`,
      [lease.name, lease.leaseId, leaseUntil],
    );
    return affected === 1;
  }

  /** Ends a run: frees the lease and sets the next due time. False when the lease had been lost. */
  async release(
    lease: TaskLease,
    finishedAt: Date,
    nextRunAt: Date,
    outcome: string,
    error = '',
  ): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE scheduled_tasks
          SET locked_until = NULL, lease_id = NULL, last_finished_at = $3, next_run_at = $4,
              last_outcome = $5, last_error = left($6, 200)
        WHERE name = $1 AND lease_id = $2`,
      [lease.name, lease.leaseId, finishedAt, nextRunAt, outcome, error],
    );
    return affected === 1;
  }

  async nextRunAt(name: string): Promise<Date | null> {
    const rows = await this.db.query<{ next_run_at: Date }[]>(
      'SELECT next_run_at FROM scheduled_tasks WHERE name = $1',
      [name],
    );
    return rows[0]?.next_run_at ?? null;
  }
}
