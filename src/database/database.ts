import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { runTransaction, sqlOn, withQueryRunner, type TransactionOptions } from './transaction.js';

export type { TransactionOptions } from './transaction.js';

/**
 * The app's one data-access idiom (docs/architecture.md, "Data access"): repositories write parameterised SQL
 * and map the rows themselves; they run it through a `Sql` — the pool (`Database`), one pooled connection
 * (`Database.withConnection`) or a transaction. TypeORM is the connection pool, the migration runner and the
 * transaction runner underneath, nothing more.
 *
 * The signature is TypeORM's `query` (rows for a SELECT; `[rows, affected]` for UPDATE/DELETE … RETURNING), so
 * repositories moved to it keep their SQL unchanged.
 */
export interface Sql {
  query<T = unknown>(text: string, params?: unknown[]): Promise<T>;
}

/**
 * A transaction in progress: a `Sql` whose statements run on one connection between BEGIN and COMMIT. Services get
 * one from `Database.transaction` (or a repository's `transaction`) and pass it on to repositories; a repository
 * method that needs a transaction (a lock held until COMMIT, `FOR UPDATE`) asks for this type, so the pool cannot
 * be passed by mistake. Services import this type, never `typeorm`.
 */
export interface Transaction extends Sql {
  readonly inTransaction: true;
}

/** The pool as a `Sql`, and the one way to open a transaction or hold a connection. */
@Injectable()
export class Database implements Sql {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  query<T = unknown>(text: string, params?: unknown[]): Promise<T> {
    return this.dataSource.query<T>(text, params);
  }

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. A connection lost
   * during COMMIT marks the error (`commitOutcomeUnknown`), see transaction.ts. `options` set the isolation level
   * and read-only mode (e.g. one REPEATABLE READ snapshot for a long read).
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return runTransaction(this.dataSource, work, options);
  }

  /**
   * Runs `work` on one pooled connection, outside any transaction, released when it settles: for session state
   * that must stay on one connection (a session advisory lock, a cursor) without holding a transaction open.
   */
  withConnection<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return withQueryRunner(this.dataSource, (runner) => work(sqlOn(runner)));
  }
}
