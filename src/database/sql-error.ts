import { QueryFailedError } from 'typeorm';

/** What PostgreSQL said about a failed statement: its SQLSTATE and, for a constraint violation, the constraint. */
export interface SqlError {
  code: string;
  constraint: string | null;
}

/**
 * The PostgreSQL error behind a failed statement, or null when `error` is not one: wrapped by TypeORM (what `Sql`
 * raises) or as node-postgres raised it (`PreparedReader`, a bare pool). Repositories and the error filter read
 * SQLSTATEs through this, never through TypeORM's classes. A SQLSTATE is five digits or capitals; Node's own
 * errors (`ECONNREFUSED`…) are not statements' errors.
 */
export function sqlErrorOf(error: unknown): SqlError | null {
  const source: unknown = error instanceof QueryFailedError ? error.driverError : error;
  if (typeof source !== 'object' || source === null) return null;
  const { code, constraint } = source as { code?: unknown; constraint?: unknown };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return null;
  return { code, constraint: typeof constraint === 'string' ? constraint : null };
}

/** SQLSTATEs the repositories tell apart. */
export const SQLSTATE = {
  uniqueViolation: '23505',
  lockNotAvailable: '55P03',
} as const;
