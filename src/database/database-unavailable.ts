/**
 * Recognises the errors of a database that is down, restarting, overloaded or too slow, as opposed to a bad query
 * or a constraint: those become 503 with Retry-After (the request may be repeated later), never 500.
 */

/** Seconds a client should wait before repeating a request refused because the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

const UNAVAILABLE_SQLSTATES = new Set([
  '57014', // query_canceled: statement_timeout
  '57P01', // admin_shutdown: server stopping, pg_terminate_backend
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, recovering
  '25P03', // idle_in_transaction_session_timeout
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '55P03', // lock_not_available
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** node-postgres and pg-pool's own wording for a lost, refused or timed-out connection. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not established|Query read timeout|the database system is (shutting down|starting up|in recovery mode)|terminating connection/i;

/** TypeORM's query runner whose connection failed (and was released) while a transaction still used it. */
const UNAVAILABLE_NAMES = new Set([
  'QueryRunnerProviderAlreadyReleasedError',
  'QueryRunnerAlreadyReleasedError',
  'ConnectionIsNotSetError',
]);

interface DriverErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  // TypeORM wraps the driver's error (QueryFailedError.driverError). A `cause` is not followed: outbound HTTP
  // failures (fetch's cause ECONNREFUSED) are not the database's.
  for (let depth = 0; depth < 3 && current && typeof current === 'object'; depth += 1) {
    const candidate = current as DriverErrorLike;
    const code = typeof candidate.code === 'string' ? candidate.code : '';
    if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
    if (typeof candidate.name === 'string' && UNAVAILABLE_NAMES.has(candidate.name)) return true;
    if (typeof candidate.message === 'string' && UNAVAILABLE_MESSAGES.test(candidate.message))
      return true;
    current = candidate.driverError;
  }
  return false;
}
