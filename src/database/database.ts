import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { runTransaction } from './transaction.js';

/**
 * The app's one data-access idiom (docs/architecture.md, "Data access"): repositories write parameterised SQL
 * and map the rows themselves; they run it through a `Sql` — the pool (`Database`) or a transaction. TypeORM is the
 * connection pool, the migration runner and the transaction runner underneath, nothing more.
 *
 * The signature is TypeORM's `query` (rows for a SELECT; `[rows, affected]` for UPDATE/DELETE … RETURNING), so
 * repositories moved to it keep their SQL unchanged.
 */
export interface Sql {
  query<T = unknown>(text: string, params?: unknown[]): Promise<T>;
}

/**
 * A transaction in progress as services see it: they get one from `Database.transaction` (or a repository's
 * `transaction`) and only pass it on to repositories, never run SQL on it. Services import this type, never
 * `typeorm`.
 *
 * It is TypeORM's EntityManager for now because the auth/users and libraries repositories (TypeORM entities and
 * raw SQL taking an EntityManager) are not converted yet; once they take `Sql`, this becomes `Sql` and the compiler
 * shows any caller that used it as more than a token.
 */
export type Transaction = EntityManager;

/** The pool as a `Sql`, and the one way to open a transaction. */
@Injectable()
export class Database implements Sql {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  query<T = unknown>(text: string, params?: unknown[]): Promise<T> {
    return this.dataSource.query<T>(text, params);
  }

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. A connection lost
   * during COMMIT marks the error (`commitOutcomeUnknown`), see transaction.ts.
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return runTransaction(this.dataSource, work);
  }
}
