import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../../database/database.js';
import { uniqueViolationOf } from '../errors/unique-violation.js';

/** A stored outcome of a create made with an `Idempotency-Key`. */
export interface StoredIdempotentResult {
  scope: string;
  fingerprint: string;
  status: number;
  body: unknown;
}

export interface IdempotentRecord {
  userId: number;
  key: string;
  scope: string;
  fingerprint: string;
  resourceId: number;
  status: number;
  body: unknown;
  createdAt: Date;
}

const PRIMARY_KEY = 'idempotency_keys_pkey';

/** The SQL of `idempotency_keys` (migration 1764900000000). */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly db: Database) {}

  /** The result recorded for (user, key) since `notBefore` (older ones have expired), through the primary key. */
  async find(userId: number, key: string, notBefore: Date): Promise<StoredIdempotentResult | null> {
    const rows = await this.db.query<StoredIdempotentResult[]>(
      `SELECT scope, fingerprint, response_status AS status, response_body AS body
       FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at > $3`,
      [userId, key, notBefore],
    );
    return rows[0] ?? null;
  }

  /**
   * Records the result in the caller's transaction (the one that created the resource). An expired row of the same
   * key gives way. A concurrent request with the same key makes this fail with a unique violation
   * (`isDuplicateKey`), after waiting for the other transaction to end.
   */
  async insert(tx: Sql, record: IdempotentRecord, notBefore: Date): Promise<void> {
    await tx.query(
      'DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at <= $3',
      [record.userId, record.key, notBefore],
    );
    await tx.query(
      `INSERT INTO idempotency_keys
         (user_id, key, scope, fingerprint, resource_id, response_status, response_body, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
      [
        record.userId,
        record.key,
        record.scope,
        record.fingerprint,
        record.resourceId,
        record.status,
        JSON.stringify(record.body),
        record.createdAt,
      ],
    );
  }

  /** Deletes rows created at or before `before`, at most `limit` per call; answers how many it deleted. */
  async deleteExpired(before: Date, limit: number): Promise<number> {
    const result = await this.db.query<[unknown[], number]>(
      `DELETE FROM idempotency_keys WHERE ctid IN (
         SELECT ctid FROM idempotency_keys WHERE created_at <= $1 ORDER BY created_at LIMIT $2
       )`,
      [before, limit],
    );
    return result[1];
  }

  /** True for the unique violation of (user, key): another request with the same key committed first. */
  isDuplicateKey(error: unknown): boolean {
    return uniqueViolationOf(error) === PRIMARY_KEY;
  }
}
