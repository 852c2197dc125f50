import { SQLSTATE, sqlErrorOf } from '../../database/sql-error.js';

/**
 * The constraint (or unique index) a failed statement violated, when it was a unique violation (23505); '' when
 * PostgreSQL named none; null for any other error, wrapped by TypeORM or as node-postgres raised it.
 */
export function uniqueViolationOf(error: unknown): string | null {
  const failure = sqlErrorOf(error);
  if (failure?.code !== SQLSTATE.uniqueViolation) return null;
  return failure.constraint ?? '';
}
