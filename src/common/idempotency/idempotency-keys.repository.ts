import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import type { Sql } from '../../database/database.js';

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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The result recorded for (user, key) since `notBefore` (older ones have expired), through the primary key. */
  async find(userId: number, key: string, notBefore: Date): Promise<StoredIdempotentResult | null> {
    const rows = await this.dataSource.query<StoredIdempotentResult[]>(
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
  async insert(manager: Sql, record: IdempotentRecord, notBefore: Date): Promise<void> {
    await manager.query(
      'DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at <= $3',
      [record.userId, record.key, notBefore],
    );
    await manager.query(
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
    const result = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM idempotency_keys WHERE ctid IN (
         SELECT ctid FROM idempotency_keys WHERE created_at <= $1 ORDER BY created_at LIMIT $2
       )`,
      [before, limit],
    );
    return result[1];
  }

  /** True for the unique violation of (user, key): another request with the same key committed first. */
  isDuplicateKey(error: unknown): boolean {
    if (!(error instanceof QueryFailedError)) return false;
    const driverError = error.driverError as { code?: string; constraint?: string };
    return driverError.code === '23505' && driverError.constraint === PRIMARY_KEY;
  }
}
