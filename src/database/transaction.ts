import { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import type { Sql, Transaction } from './database.js';
import { isDatabaseUnavailable } from './database-unavailable.js';

const OUTCOME_UNKNOWN = Symbol('commitOutcomeUnknown');
const logger = new Logger('Database');

/** Attempts of a read right after a commit: a blip can leave several pooled connections dead at once. */
const READ_AFTER_COMMIT_ATTEMPTS = 3;

/**
 * True when `error` ended a `runTransaction` while its COMMIT was under way and the connection failed: the
 * transaction may or may not have committed. Files written for it must then be kept (the orphan sweep decides
 * later); after any other failure nothing was committed and they may go.
 */
export function commitOutcomeUnknown(error: unknown): boolean {
  return typeof error === 'object' && error !== null && OUTCOME_UNKNOWN in error;
}

export interface TransactionOptions {
  /** PostgreSQL's default (READ COMMITTED) unless set. */
  isolation?: 'REPEATABLE READ' | 'SERIALIZABLE';
  /** `SET TRANSACTION READ ONLY` before `work` runs. */
  readOnly?: boolean;
}

/** `runner` as a `Sql` and nothing more: repositories never see TypeORM's query runner. */
export function sqlOn(runner: QueryRunner): Sql {
  return {
    query: <T>(text: string, params?: unknown[]) => runner.query(text, params) as Promise<T>,
  };
}

/** Runs `work` on a connection of its own, released (whatever happened) when `work` settles. */
export async function withQueryRunner<T>(
  dataSource: DataSource,
  work: (runner: QueryRunner) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    return await work(runner);
  } finally {
    await runner.release().catch(() => undefined);
  }
}

/**
 * `dataSource.transaction`, but telling apart a failure before COMMIT (nothing committed) from a lost connection
 * during COMMIT (outcome unknown, see commitOutcomeUnknown). The error is rethrown unchanged, marked.
 */
export async function runTransaction<T>(
  dataSource: DataSource,
  work: (tx: Transaction) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  return withQueryRunner(dataSource, async (runner) => {
    let committing = false;
    try {
      await runner.startTransaction(options.isolation);
      if (options.readOnly) await runner.query('SET TRANSACTION READ ONLY');
      const result = await work({ ...sqlOn(runner), inTransaction: true });
      committing = true;
      await runner.commitTransaction();
      return result;
    } catch (error) {
      // A runner released by its connection's failure before COMMIT was sent did not commit.
      const commitSent =
        committing && (error as Error | null)?.name !== 'QueryRunnerAlreadyReleasedError';
      if (commitSent && isDatabaseUnavailable(error) && typeof error === 'object' && error) {
        Object.defineProperty(error, OUTCOME_UNKNOWN, { value: true });
        logger.warn(`connection lost during COMMIT: outcome unknown, files kept for the sweep`);
      } else if (runner.isTransactionActive) {
        await runner.rollbackTransaction().catch(() => undefined);
      }
      throw error;
    }
  });
}

/**
 * A read right after a commit, tried again on another connection when the attempt lost its connection, so a
 * database blip between COMMIT and the read does not turn a saved submission into an error (and a duplicate when
 * the client retries).
 */
export async function readAfterCommit<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= READ_AFTER_COMMIT_ATTEMPTS || !isDatabaseUnavailable(error)) throw error;
      logger.warn(`read after commit lost its connection (attempt ${attempt}), trying again`);
    }
  }
}
