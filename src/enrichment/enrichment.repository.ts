import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../database/database.js';

/** A job this worker holds: `attempts` already counts the try in progress and identifies this claim. */
export interface ClaimedJob {
  id: number;
  libraryId: number;
  attempts: number;
}

export interface LibraryForEnrichment {
  name: string;
  description: string;
  address: string;
  city: string;
  postalCode: string;
  country: string;
  photoKey: string | null;
}

export type EnrichableField = 'name' | 'description';

/** Every query of the enrichment queue (table `enrichment_jobs`) and the library columns it reads and fills. */
@Injectable()
export class EnrichmentRepository {
  constructor(private readonly db: Database) {}

  async insertQueued(tx: Sql, libraryId: number, now: Date): Promise<void> {
    await tx.query(
      `INSERT INTO enrichment_jobs (library_id, status, run_after, created_at, updated_at)
       VALUES ($1, 'queued', $2, $2, $2)`,
      [libraryId, now],
    );
  }

  /** A job whose last try was interrupted (lease expired) and which has no try left is given up. */
  async failExhaustedLeases(now: Date, maxAttempts: number): Promise<number> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE enrichment_jobs
          SET status = 'failed', locked_until = NULL, last_error = 'interrupted', updated_at = $1
        WHERE status = 'running' AND locked_until <= $1 AND attempts >= $2`,
      [now, maxAttempts],
    );
    return affected;
  }

  /**
   * Claims the next due job, if any: queued and due, or running with an expired lease (its worker died). The row
   * lock with SKIP LOCKED keeps concurrent workers off the same row; once this statement commits, the lease does.
   */
  async claimNext(now: Date, leaseUntil: Date, maxAttempts: number): Promise<ClaimedJob | null> {
    const [rows] = await this.db.query<
      [{ id: number; library_id: number; attempts: number }[], number]
    >(
      `UPDATE enrichment_jobs AS job
          SET status = 'running',
              attempts = job.attempts + 1,
              locked_until = $2,
              last_error = CASE WHEN job.status = 'running' THEN 'interrupted' ELSE job.last_error END,
              updated_at = $1
         FROM (SELECT id FROM enrichment_jobs
                WHERE status IN ('queued', 'running')
                  AND ((status = 'queued' AND run_after <= $1)
                    OR (status = 'running' AND locked_until <= $1 AND attempts < $3))
                ORDER BY run_after, id
                LIMIT 1
                FOR UPDATE SKIP LOCKED) AS due
        WHERE job.id = due.id
        RETURNING job.id, job.library_id, job.attempts`,
      [now, leaseUntil, maxAttempts],
    );
    const row = rows[0];
    return row ? { id: row.id, libraryId: row.library_id, attempts: row.attempts } : null;
  }

  async findLibrary(libraryId: number): Promise<LibraryForEnrichment | null> {
    const rows = await this.db.query<Record<string, string | null>[]>(
      `SELECT name, description, address, city, postal_code, country, photo_key FROM libraries WHERE id = $1`,
      [libraryId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      name: row.name ?? '',
      description: row.description ?? '',
      address: row.address ?? '',
      city: row.city ?? '',
      postalCode: row.postal_code ?? '',
      country: row.country ?? '',
      photoKey: row.photo_key,
    };
  }

  /** Ends a claimed job without asking the AI (nothing left to fill, or the library is gone). */
  async markDone(job: ClaimedJob, now: Date): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE enrichment_jobs SET status = 'done', locked_until = NULL, last_error = '', updated_at = $3
        WHERE id = $1 AND status = 'running' AND attempts = $2`,
      [job.id, job.attempts, now],
    );
    return affected === 1;
  }

  /**
   * One transaction: re-checks that this claim still holds the job, locks the library row, fills only the fields
   * that are still blank, records them as AI-generated and closes the job. Returns the fields filled, or null when
   * the claim was lost (another worker took the job over after the lease expired).
   */
  async applySuggestion(
    job: ClaimedJob,
    suggestion: Record<EnrichableField, string>,
    now: Date,
  ): Promise<EnrichableField[] | null> {
    return this.db.transaction(async (tx) => {
      const owned = await tx.query<unknown[]>(
        `SELECT 1 FROM enrichment_jobs WHERE id = $1 AND status = 'running' AND attempts = $2 FOR UPDATE`,
        [job.id, job.attempts],
      );
      if (owned.length === 0) return null;

      const rows = await tx.query<
        { name: string; description: string; ai_generated_fields: string[] }[]
      >('SELECT name, description, ai_generated_fields FROM libraries WHERE id = $1 FOR UPDATE', [
        job.libraryId,
      ]);
      const library = rows[0];
      const filled: EnrichableField[] = [];
      if (library) {
        const next = { name: library.name, description: library.description };
        for (const field of ['name', 'description'] as const) {
          if (next[field].trim() === '') {
            next[field] = suggestion[field];
            filled.push(field);
          }
        }
        if (filled.length > 0) {
          const marked = [...new Set([...library.ai_generated_fields, ...filled])];
          await tx.query(
            `UPDATE libraries SET name = $2, description = $3, ai_generated_fields = $4::text[], updated_at = $5
              WHERE id = $1`,
            [job.libraryId, next.name, next.description, marked, now],
          );
        }
      }
      await tx.query(
        `UPDATE enrichment_jobs SET status = 'done', locked_until = NULL, last_error = '', updated_at = $2
          WHERE id = $1`,
        [job.id, now],
      );
      return filled;
    });
  }

  /** Records a failed try: back to the queue until `retryAt`, or `failed` when no try is left. */
  async recordFailure(
    job: ClaimedJob,
    error: string,
    retryAt: Date,
    giveUp: boolean,
    now: Date,
  ): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      `UPDATE enrichment_jobs
          SET status = $3, run_after = $4, locked_until = NULL, last_error = $5, updated_at = $6
        WHERE id = $1 AND status = 'running' AND attempts = $2`,
      [job.id, job.attempts, giveUp ? 'failed' : 'queued', retryAt, error, now],
    );
    return affected === 1;
  }
}
