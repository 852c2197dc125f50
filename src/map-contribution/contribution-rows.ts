import type { CandidateSnapshot, ContributionStatus, ElementType } from './domain/types.js';

/** The rows the map-contribution repositories read, and the column lists that produce them. */

export interface ContributionRow {
  id: number;
  library_id: number;
  status: ContributionStatus;
  checked_at: Date | null;
  last_check_failed: boolean;
  duplicate_candidates: CandidateSnapshot[];
  resolved_different: string[];
  mapdb_element_type: ElementType | null;
  mapdb_element_id: string | null;
  changeset_id: string | null;
  contributed_at: Date | null;
  contributed_by: number | null;
  contributed_by_username: string | null;
  last_attempt_key: string | null;
  last_error_code: string;
  last_error_message: string;
}

/** The library columns the workflow reads (eligibility, tags, position). */
export interface ContributionLibraryRow {
  id: number;
  slug: string;
  name: string;
  description: string;
  address: string;
  city: string;
  country: string;
  status: 'pending' | 'approved' | 'rejected';
  submission_origin: 'legacy' | 'user' | 'staff' | 'import';
  created_by: number | null;
  mapdb_submission_allowed: boolean;
  source: string;
  external_id: string;
  pending_changes: unknown;
  pending_photo: unknown;
  lat: number;
  lng: number;
  capacity: number | null;
  is_indoor: boolean | null;
  is_lit: boolean | null;
  wheelchair_accessible: '' | 'yes' | 'no' | 'limited';
  brand: string;
  operator: string;
  website: string;
  ai_generated_fields: string[];
}

export interface EventRow {
  event_type: string;
  outcome: string;
  actor_id: number | null;
  actor_username: string | null;
  attempt_key: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

export interface NewEvent {
  type: string;
  outcome: string;
  actor: { id: number; username: string } | null;
  attemptKey?: string | null;
  details?: Record<string, unknown>;
  /** When it happened (the injected clock); the database's now() when omitted. */
  at?: Date;
}

export const LIBRARY_COLUMNS = `l.id, l.slug, l.name, l.description, l.address, l.city, l.country, l.status, l.submission_origin,
  l.created_by, l.mapdb_submission_allowed, l.source, l.external_id, l.pending_changes, l.pending_photo,
  ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lng, l.capacity, l.is_indoor, l.is_lit,
  l.wheelchair_accessible, l.brand, l.operator, l.website, l.ai_generated_fields`;

export const CONTRIBUTION_COLUMNS = `c.id, c.library_id, c.status, c.checked_at, c.last_check_failed, c.duplicate_candidates,
  c.resolved_different, c.mapdb_element_type, c.mapdb_element_id::text AS mapdb_element_id,
  c.changeset_id::text AS changeset_id, c.contributed_at, c.contributed_by, u.username AS contributed_by_username,
  c.last_attempt_key, c.last_error_code, c.last_error_message`;

/** A library and its contribution record (null: none yet), read together in one statement. */
export interface LibraryWithRecord {
  library: ContributionLibraryRow;
  record: ContributionRow | null;
}

/** The library columns with the record as one JSON column (`record`), for the joined reads. */
export const LIBRARY_WITH_RECORD = `SELECT ${LIBRARY_COLUMNS}, to_jsonb(rec) AS record
       FROM libraries l
       LEFT JOIN LATERAL (
         SELECT ${CONTRIBUTION_COLUMNS} FROM map_contributions c LEFT JOIN users u ON u.id = c.contributed_by
         WHERE c.library_id = l.id
       ) rec ON true`;

export function withRecord(
  row: ContributionLibraryRow & { record: ContributionRow | null },
): LibraryWithRecord {
  const { record, ...library } = row;
  return {
    library,
    record: record
      ? {
          ...record,
          checked_at: record.checked_at ? new Date(record.checked_at) : null,
          contributed_at: record.contributed_at ? new Date(record.contributed_at) : null,
        }
      : null,
  };
}
