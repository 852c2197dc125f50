/**
 * Rows to domain facts, domain values to the API's response shapes, and a library to the exact write payload.
 * Pure functions: no database, no clock, no configuration (the plan URL is passed in).
 */
import type { ContributionLibraryRow, ContributionRow, EventRow } from './contribution-rows.js';
import type { HistoryEventRow } from './contribution-history.repository.js';
import { changesetTags, nodeTags, previewWarnings } from './domain/tag-mapping.js';
import type {
  Blocker,
  ContributionFacts,
  LibraryFacts,
  Tags,
  VerifiedValues,
} from './domain/types.js';
import type {
  ContributionEventDto,
  ContributionRecordResponse,
  HistoryEventResponse,
  PreviewResponse,
} from './dto/map-contribution.dto.js';

export const SERVICE_NAME = 'bookcase-directory';
export const SERVICE_VERSION = '0.1.0';
const SOURCE_WORDING = 'survey; individually reviewed user submission (Bookcase Directory)';

/** Exactly what a write sends: recorded in write_started before any outbound call. */
export interface WritePayload {
  node: { lat: number; lon: number; tags: Tags };
  changeset_tags: Tags;
}

export function libraryFacts(row: ContributionLibraryRow): LibraryFacts {
  return {
    id: row.id,
    status: row.status,
    submissionOrigin: row.submission_origin,
    createdBy: row.created_by,
    mapdbSubmissionAllowed: row.mapdb_submission_allowed,
    source: row.source,
    externalId: row.external_id,
    hasPendingChanges: row.pending_changes !== null,
    hasPendingPhoto: row.pending_photo !== null,
    name: row.name,
    address: row.address,
    lat: Number(row.lat),
    lng: Number(row.lng),
    capacity: row.capacity,
    isIndoor: row.is_indoor,
    isLit: row.is_lit,
    wheelchairAccessible: row.wheelchair_accessible,
    brand: row.brand,
    operator: row.operator,
    website: row.website,
    aiGeneratedFields: row.ai_generated_fields,
  };
}

function numberOrNull(value: string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function contributionFacts(record: ContributionRow | null): ContributionFacts {
  return {
    status: record?.status ?? 'unchecked',
    checkedAt: record?.checked_at ? new Date(record.checked_at) : null,
    lastCheckFailed: record?.last_check_failed ?? false,
    elementType: record?.mapdb_element_type ?? null,
    elementId: numberOrNull(record?.mapdb_element_id),
  };
}

/** The node id a record holds, or null. */
export function elementIdOf(record: ContributionRow | null | undefined): number | null {
  return numberOrNull(record?.mapdb_element_id);
}

/** The tags of a changeset of `count` libraries of the library's city (none without the published plan). */
export function changesetTagsFor(
  library: ContributionLibraryRow,
  count: number,
  planUrl: string | null | undefined,
): Tags {
  if (!planUrl) return {};
  return changesetTags({
    comment: `Add ${count} reviewed public bookcase${count === 1 ? '' : 's'} in ${library.city}, ${library.country}`,
    createdBy: `${SERVICE_NAME}/${SERVICE_VERSION}`,
    source: SOURCE_WORDING,
    planUrl,
    reviewRequested: true,
  });
}

export function writePayload(
  library: ContributionLibraryRow,
  verified: VerifiedValues,
  tags: Tags,
): WritePayload {
  return {
    node: {
      lat: Number(library.lat),
      lon: Number(library.lng),
      tags: nodeTags(libraryFacts(library), verified),
    },
    changeset_tags: tags,
  };
}

/**
 * Nearby features that do not block (no signal, or resolved by staff as a different feature: both still need a
 * look at the map), then why a library value is left out of the tags.
 */
function warnings(
  library: ContributionLibraryRow,
  record: ContributionRow | null,
  verified: VerifiedValues,
): string[] {
  const mapping = previewWarnings(libraryFacts(library), verified);
  if (!record || record.status === 'unchecked') {
    return ['No duplicate check has run yet.', ...mapping];
  }
  const nearby = record.duplicate_candidates
    .filter((candidate) => candidate.signals.length === 0 || candidate.resolved_different)
    .map((candidate) => {
      const where = `${candidate.type}/${candidate.id} at ${Math.round(candidate.distance_m)} m`;
      return candidate.resolved_different
        ? `Nearby ${where} was resolved as a different feature: inspect it on the map.`
        : `Nearby ${where}: inspect it on the map.`;
    });
  return [...nearby, ...mapping];
}

/** The dry run of a write: what a confirm would send, with the failing conditions and warnings. */
export function toPreview(
  library: ContributionLibraryRow,
  record: ContributionRow | null,
  blockers: Blocker[],
  verified: VerifiedValues,
  planUrl: string | null | undefined,
): PreviewResponse {
  return {
    eligible: blockers.length === 0,
    blockers,
    warnings: warnings(library, record, verified),
    // A dry preview renders even when the changeset metadata is not configured (writes are blocked then).
    ...writePayload(library, verified, changesetTagsFor(library, 1, planUrl)),
  };
}

export function toRecordResponse(
  library: ContributionLibraryRow,
  record: ContributionRow | null,
  blockers: Blocker[],
  events: EventRow[],
): ContributionRecordResponse {
  return {
    library: {
      id: library.id,
      slug: library.slug,
      name: library.name,
      city: library.city,
      country: library.country,
      status: library.status,
      mapdb_submission_allowed: library.mapdb_submission_allowed,
    },
    status: record?.status ?? 'unchecked',
    checked_at: record?.checked_at ? new Date(record.checked_at).toISOString() : null,
    duplicate_candidates: record?.duplicate_candidates ?? [],
    mapdb_element_type: record?.mapdb_element_type ?? null,
    mapdb_element_id: elementIdOf(record),
    changeset_id: numberOrNull(record?.changeset_id),
    contributed_at: record?.contributed_at ? new Date(record.contributed_at).toISOString() : null,
    contributed_by:
      record?.contributed_by && record.contributed_by_username
        ? { id: record.contributed_by, username: record.contributed_by_username }
        : null,
    last_attempt_key: record?.last_attempt_key ?? null,
    last_error_code: record?.last_error_code ?? '',
    last_error_message: record?.last_error_message ?? '',
    eligible: blockers.length === 0,
    blockers,
    events: events.map(toEventResponse),
  };
}

export function toEventResponse(event: EventRow): ContributionEventDto {
  return {
    type: event.event_type,
    outcome: event.outcome,
    actor:
      event.actor_id !== null && event.actor_username
        ? { id: event.actor_id, username: event.actor_username }
        : null,
    attempt_key: event.attempt_key,
    details: event.details,
    created_at: new Date(event.created_at).toISOString(),
  };
}

export function toHistoryEventResponse(event: HistoryEventRow): HistoryEventResponse {
  return {
    ...toEventResponse(event),
    library:
      event.library_slug !== null
        ? { slug: event.library_slug, name: event.library_name ?? '' }
        : null,
  };
}
