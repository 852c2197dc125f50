import { QueryFailedError } from 'typeorm';

/** What PostgreSQL said about a failed statement: its SQLSTATE and, for a constraint violation, the constraint. */
export interface SqlError {
  code: string;
  constraint: string | null;
}

/**
 * The PostgreSQL error behind a failed statement of any `Sql` (TypeORM wraps the driver's error), or null when
 * `error` is not a failed statement. Repositories read SQLSTATEs through this, never through TypeORM's classes.
 */
export function sqlErrorOf(error: unknown): SqlError | null {
  if (!(error instanceof QueryFailedError)) return null;
  const driverError = error.driverError as { code?: unknown; constraint?: unknown } | undefined;
  if (typeof driverError?.code !== 'string') return null;
  return {
    code: driverError.code,
    constraint: typeof driverError.constraint === 'string' ? driverError.constraint : null,
  };
}

/** SQLSTATEs the repositories tell apart. */
export const SQLSTATE = {
  uniqueViolation: '23505',
  lockNotAvailable: '55P03',
} as const;
