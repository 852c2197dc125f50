import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { FAST_TIMESTAMP_TYPES } from './timestamp-parser.js';

/** A statement as PostgreSQL received it: parameters in their text form (what `pg` sends, typed `unknown`). */
export interface CapturedStatement {
  text: string;
  params: (string | null)[];
  prepared: boolean;
}

/** A parameter in the text form `pg` sends it in (arrays as array literals, dates in ISO 8601). */
export function parameterText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const element = (item: unknown) => {
      const text = parameterText(item);
      return text === null ? 'NULL' : `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
    };
    return `{${value.map(element).join(',')}}`;
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return value.toString();
  return JSON.stringify(value) ?? null;
}

/**
 * Reads with named prepared statements on the app's pool. TypeORM's `query` never prepares, and for statements that
 * are costly to plan and run in a few shapes (proximity lists, the map's cells and tiles) PostgreSQL's planning was a
 * third of the work. `pg` prepares a statement per connection when it has a `name`, so this is the one place that
 * takes a client out of TypeORM's pool (the driver's `master` pool: TypeORM has no public accessor for it).
 */
@Injectable()
export class PreparedReader {
  /** A random id per pooled connection (see read). */
  private readonly connectionIds = new WeakMap<pg.PoolClient, string>();
  /** Statement text → digest (statements come in a few dozen shapes; hashing each time was measurable). */
  private readonly digests = new Map<string, string>();
  /** `npm run bench` only (see BenchController): the next statements read, to replay them alone with pgbench. */
  private capture: { limit: number; statements: CapturedStatement[] } | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs a read. A `prepared` statement is parsed once per pooled connection and then only executed, named after its
   * text (identical statements share a name). PostgreSQL plans it with the actual values for the first executions and
   * keeps a generic plan only when that is estimated to cost no more. Unprepared reads go through TypeORM as usual.
   * Prepared reads parse `timestamptz` with parseTimestamptz (the same Dates as pg's parser, cheaper).
   */
  async read<T>(text: string, params: unknown[], prepared = true): Promise<T[]> {
    if (this.capture && this.capture.statements.length < this.capture.limit)
      this.capture.statements.push({ text, params: params.map(parameterText), prepared });
    if (!prepared) return this.dataSource.query<T[]>(text, params);
    const pool = (this.dataSource.driver as PostgresDriver).master as pg.Pool;
    const client = await pool.connect();
    let id = this.connectionIds.get(client);
    if (id === undefined) this.connectionIds.set(client, (id = randomBytes(6).toString('hex')));
    // The name holds a random id of the connection too: the embedded database serves every connection (of this
    // process and of others) from one session, where two connections preparing one name would collide.
    const name = `lib_${id}_${this.digest(text)}`;
    try {
      const result = await client.query<T & pg.QueryResultRow>({
        name,
        text,
        values: params,
        types: FAST_TIMESTAMP_TYPES,
      });
      client.release();
      return result.rows;
    } catch (error) {
      // A failed connection is closed rather than handed to the next request (with its prepared statements).
      client.release(error as Error);
      // The error TypeORM's `query` would raise for the same failure, so callers (and the database-unavailable
      // check, which reads `driverError`) see one kind whichever way a statement ran.
      throw new QueryFailedError(text, params, error as Error);
    }
  }

  private digest(text: string): string {
    let digest = this.digests.get(text);
    if (digest === undefined) {
      // Bounded in case a caller ever builds texts with values in them.
      if (this.digests.size >= 1000) this.digests.clear();
      digest = createHash('sha1').update(text).digest('base64url');
      this.digests.set(text, digest);
    }
    return digest;
  }

  /** Starts recording the next `limit` reads (replacing any earlier recording). */
  startCapture(limit: number): void {
    this.capture = { limit, statements: [] };
  }

  /** The reads recorded since startCapture; recording stops. */
  takeCapture(): CapturedStatement[] {
    const statements = this.capture?.statements ?? [];
    this.capture = null;
    return statements;
  }
}
