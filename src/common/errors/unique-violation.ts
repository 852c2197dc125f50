/**
 * The constraint (or unique index) a failed statement violated, when it was a unique violation (23505); null for
 * any other error. Reads the driver's error whether it arrives wrapped (TypeORM's `QueryFailedError.driverError`,
 * what `Sql` raises today) or as node-postgres raised it, so callers need not know which ran the statement.
 */
export function uniqueViolationOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const wrapped = (error as { driverError?: unknown }).driverError;
  const source = (typeof wrapped === 'object' && wrapped !== null ? wrapped : error) as {
    code?: unknown;
    constraint?: unknown;
  };
  if (source.code !== '23505') return null;
  return typeof source.constraint === 'string' ? source.constraint : '';
}
