import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';

export interface DatabaseTimeouts {
  /** Server-side limit per statement (0 = none). */
  statementTimeoutSeconds: number;
  /** The server ends a session left idle inside a transaction this long (0 = none). */
  idleInTransactionTimeoutSeconds: number;
  /** Longest wait for a pool connection (a free one or a new one), then the query fails (→ 503). */
  poolWaitSeconds: number;
  /**
   * A pool connection left idle this long is closed (0 = never). Each connection holds its prepared statements and
   * their cached plans, so closing it early makes the next request parse and plan again.
   */
  poolIdleSeconds: number;
  /**
   * Client-side bound on one query (0 = none): a server that stopped answering (hung, SIGSTOPped, unreachable
   * without a reset) cannot end the query itself, so the client gives up, fails it (→ 503) and discards the
   * connection. Longer than `statementTimeoutSeconds`, which ends slow queries cleanly on a server that answers.
   */
  queryTimeoutSeconds: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  statementTimeoutSeconds: 0,
  idleInTransactionTimeoutSeconds: 0,
  poolWaitSeconds: 10,
  poolIdleSeconds: 300,
  queryTimeoutSeconds: 0,
};

/** TCP keepalive probes start after this much idle time (the OS default is 2 h), for peers that vanished. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/** node-postgres' error for a query that outlived `query_timeout`. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

type QueryMethod = (...args: unknown[]) => unknown;

/**
 * The pool's client class, for two failure modes node-postgres leaves to the application:
 *
 * - It emits 'error' on a client whose connection dies (server restart, pg_terminate_backend) and nobody listens
 *   while the client is checked out between two queries: an unhandled 'error' event would end the process. Every
 *   client therefore listens for good; the failure still reaches the query that was running and makes the client
 *   unusable for the next one (which fails and is answered 503).
 * - Its `query_timeout` fails a query that got no answer in time, but the query stays active on the connection: the
 *   client would go back to the pool (TypeORM releases it without an error) still waiting for the hung server, and
 *   the next request using it would queue behind the old query. On that timeout the client is ended at once
 *   (`end()` marks it ending synchronously, so pg-pool discards it on release, and destroys the socket).
 */
export class GuardedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
    const query = super.query.bind(this) as QueryMethod;
    const discardOnTimeout = (error: unknown) => {
      if ((error as Error | null)?.message === QUERY_TIMEOUT_MESSAGE)
        void this.end().catch(() => undefined);
    };
    const guarded: QueryMethod = (...args) => {
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (error: unknown, result: unknown) => {
          discardOnTimeout(error);
          (callback as (error: unknown, result: unknown) => void)(error, result);
        };
        return query(...args);
      }
      const result = query(...args);
      // Runs before the caller's own reaction (attached first), so the client is ending when it is released.
      if (result instanceof Promise) result.then(undefined, discardOnTimeout);
      return result;
    };
    this.query = guarded as pg.Client['query'];
  }
}

export function buildDataSourceOptions(
  url: string,
  poolSize = 10,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: timeouts.poolWaitSeconds * 1000,
      // node-postgres closes an idle connection after 10 s by default, and with it every prepared statement and the
      // generic plans PostgreSQL had settled on: after a quiet spell of 10 s the next requests were prepared and
      // planned again (custom plans first). 0 keeps idle connections open.
      idleTimeoutMillis: timeouts.poolIdleSeconds * 1000,
      // Startup parameters of every connection (node-postgres omits them when 0).
      statement_timeout: timeouts.statementTimeoutSeconds * 1000,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutSeconds * 1000,
      // No JIT: the app's statements are short, and PostgreSQL compiled the larger list statements (a `q` page plans
      // parts it never runs) for 0.1–2.5 s at 1M libraries before running them in about a millisecond.
      options: '-c jit=off',
      // Client side (never sent to the server); 0 leaves it off.
      query_timeout: timeouts.queryTimeoutSeconds * 1000 || undefined,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
      Client: GuardedClient,
    },
  };
}
