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

/** node-postgres' error for a query that outlived `query_timeout` (GuardedClient raises the same). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

type QueryCallback = (error: Error | null | undefined, result?: unknown) => void;
type QueryMethod = (...args: unknown[]) => unknown;

/** The parts of a pg Query (or any submittable) GuardedClient reads or sets. */
interface QueryInternals {
  submit: unknown;
  callback?: QueryCallback | null;
  query_timeout?: number;
}

const ignoreAnswer: QueryCallback = () => undefined;

function isSubmittable(config: unknown): config is QueryInternals {
  return typeof (config as QueryInternals | null)?.submit === 'function';
}

/**
 * The query's callback once its read timer runs. Built by a function, not written as a literal on the right of
 * `query.callback = …`: V8 allocates a function literal assigned to a property in the old generation (its guess that
 * it is a method), where it stays after the query ends, and its context (the query, its rows, the caller's promise)
 * survives every scavenge until the next mark-compact. pg's own `query_timeout` and promise form are written that way.
 */
function stoppingTimer(timer: NodeJS.Timeout, callback: QueryCallback): QueryCallback {
  return (error, result) => {
    clearTimeout(timer);
    callback(error, result);
  };
}

/** A pg callback settling a promise (a function's result, for the reason given at stoppingTimer). */
function settling(
  resolve: (result: unknown) => void,
  reject: (error: Error) => void,
): QueryCallback {
  return (error, result) => (error ? reject(error) : resolve(result));
}

/** What pg's promise form does with a failure: the stack leads to the caller, not to the socket's read. */
function withCallersStack(error: Error): never {
  Error.captureStackTrace(error);
  throw error;
}

/**
 * A query got no answer within its `query_timeout`: pg's own handling (lib/client.js: the error, the callback
 * silenced for a late answer), except that the client is ended first, before its user hears of the failure and
 * releases it, so pg-pool discards it instead of reusing a connection that still waits for the hung answer.
 */
function readTimedOut(client: pg.Client, query: QueryInternals, callback: QueryCallback): void {
  query.callback = ignoreAnswer;
  void client.end().catch(() => undefined);
  callback(new Error(QUERY_TIMEOUT_MESSAGE));
}

/**
 * The pool's client class, for three things node-postgres leaves to the application:
 *
 * - It emits 'error' on a client whose connection dies (server restart, pg_terminate_backend) and nobody listens
 *   while the client is checked out between two queries: an unhandled 'error' event would end the process. Every
 *   client therefore listens for good; the failure still reaches the query that was running and makes the client
 *   unusable for the next one (which fails and is answered 503).
 * - Its `query_timeout` fails a query that got no answer in time, but the query stays active on the connection: the
 *   client would go back to the pool (TypeORM releases it without an error) still waiting for the hung server, and
 *   the next request using it would queue behind the old query. This class therefore runs `query_timeout` itself
 *   (pg never sees the option) and ends the client when it fires (`end()` marks it ending synchronously, so pg-pool
 *   discards it on release, and destroys the socket).
 * - pg's `query_timeout` and its promise form wrap every query's callback in a closure that V8 allocates in the old
 *   generation (see stoppingTimer): each one kept its query's rows and its caller's promise alive through the next
 *   scavenge, which then promoted them (6 MB per scavenge at 400 list pages per second; issue 22). Queries sent
 *   here get callbacks built by functions, and a query without a callback (pg's promise form) is sent as a pg
 *   `Query` with a callback settling the returned promise.
 */
export class GuardedClient extends pg.Client {
  private readonly readTimeoutMillis: number;

  constructor(config?: string | pg.ClientConfig) {
    const options = typeof config === 'object' ? config : undefined;
    super(options ? { ...options, query_timeout: undefined } : config);
    this.readTimeoutMillis = options?.query_timeout ?? 0;
    this.on('error', () => undefined);
    const query = super.query.bind(this) as QueryMethod;
    const guarded = (config: unknown, values?: unknown, callback?: unknown): unknown => {
      if (config === null || (typeof config !== 'object' && typeof config !== 'string'))
        return query(config, values, callback); // pg's own TypeError
      const timeout =
        (typeof config === 'object' && (config as QueryInternals).query_timeout) ||
        this.readTimeoutMillis;
      if (isSubmittable(config)) {
        // What pg does with a submittable's callback, done first so the timer can wrap it.
        if (!config.callback) {
          if (typeof values === 'function') config.callback = values as QueryCallback;
          else if (typeof callback === 'function') config.callback = callback as QueryCallback;
        }
        this.watch(config, timeout);
        return query(config);
      }
      const submittable = new pg.Query(
        config as pg.QueryConfig,
        values as unknown[],
        callback as QueryCallback,
      ) as unknown as QueryInternals;
      if (submittable.callback) {
        this.watch(submittable, timeout);
        query(submittable);
        return undefined;
      }
      const result = new Promise((resolve, reject) => {
        submittable.callback = settling(resolve, reject);
      });
      this.watch(submittable, timeout);
      query(submittable);
      return result.catch(withCallersStack);
    };
    this.query = guarded as pg.Client['query'];
  }

  /** Starts the query's read timer (none when `timeout` is 0), stopped by its callback. */
  private watch(query: QueryInternals, timeout: number): void {
    if (!timeout) return;
    const callback = query.callback ?? ignoreAnswer;
    const timer = setTimeout(readTimedOut, timeout, this, query, callback);
    query.callback = stoppingTimer(timer, callback);
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
      // Client side (never sent to the server), run by GuardedClient; 0 leaves it off.
      query_timeout: timeouts.queryTimeoutSeconds * 1000 || undefined,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
      Client: GuardedClient,
    },
  };
}
