/** The filters both audit histories (staff decisions, map-contribution events) share. */
export interface ActorLibraryFilter {
  /** The staff member's username, case-insensitive. */
  actor?: string;
  /** The library's slug. */
  library?: string;
}

/**
 * SQL conditions on `e.actor_username` and `e.library_id` (each read through an index of its table), appending
 * their values to `params`.
 */
export function actorLibraryConditions(filter: ActorLibraryFilter, params: unknown[]): string[] {
  const conditions: string[] = [];
  if (filter.actor) {
    params.push(filter.actor);
    conditions.push(`lower(e.actor_username) = lower($${params.length})`);
  }
  if (filter.library) {
    params.push(filter.library);
    conditions.push(`e.library_id = (SELECT id FROM libraries WHERE slug = $${params.length})`);
  }
  return conditions;
}

export const whereClause = (conditions: string[]): string =>
  conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
