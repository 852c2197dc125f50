/**
 * Shared vocabulary of the map-contribution workflow (api-spec "Map contribution", decisions §6). Pure types: no
 * Nest, no TypeORM, no I/O. The domain functions, the adapters and the service all speak these.
 */

export type ContributionStatus =
  | 'unchecked'
  | 'no_match'
  | 'possible_duplicate'
  | 'already_present'
  | 'submitting'
  | 'contributed'
  | 'failed';

export type ElementType = 'node' | 'way' | 'relation';

export type BlockerCode =
  | 'not_approved'
  | 'origin_not_user'
  | 'submitter_missing'
  | 'permission_missing'
  | 'mapdb_source'
  | 'pending_changes'
  | 'pending_photo'
  | 'element_recorded'
  | 'check_missing'
  | 'check_failed'
  | 'check_stale'
  | 'possible_duplicate'
  | 'writes_disabled';

export interface Blocker {
  code: BlockerCode;
  message: string;
}

/** What eligibility and tag mapping need to know about a library (read under the write lock for a confirm). */
export interface LibraryFacts {
  id: number;
  status: 'pending' | 'approved' | 'rejected';
  submissionOrigin: 'legacy' | 'user' | 'staff' | 'import';
  createdBy: number | null;
  mapdbSubmissionAllowed: boolean;
  source: string;
  externalId: string;
  hasPendingChanges: boolean;
  hasPendingPhoto: boolean;
  name: string;
  address: string;
  lat: number;
  lng: number;
  capacity: number | null;
  isIndoor: boolean | null;
  isLit: boolean | null;
  wheelchairAccessible: '' | 'yes' | 'no' | 'limited';
  brand: string;
  operator: string;
  website: string;
  /** Fields AI enrichment wrote (`name`, `description`): never sent to the map. */
  aiGeneratedFields: string[];
}

/** The contribution record's state as eligibility needs it. */
export interface ContributionFacts {
  status: ContributionStatus;
  /** Time of the most recent completed duplicate check (null: never, or the last one failed). */
  checkedAt: Date | null;
  /** Whether the most recent check attempt failed (query error, timeout, malformed answer, rate limit). */
  lastCheckFailed: boolean;
  elementType: ElementType | null;
  elementId: number | null;
}

/** The global switches a write needs (decisions §6). */
export interface WriteGates {
  killSwitchOn: boolean;
  /** Every launch gate named in MAPDB_LAUNCH_GATES. */
  allLaunchGates: boolean;
  /** allow_write_api confirmed through GET /api/0.6/permissions for the current token. */
  writeApiAllowed: boolean;
  /** A 401 from the map API was recorded for the current token. */
  tokenDisabled: boolean;
}

/** A map feature returned by the duplicate query, with its distance to the library in metres. */
export interface MapCandidate {
  type: ElementType;
  id: number;
  /** The node position, or the representative point (center) of a way or relation. */
  lat: number;
  lon: number;
  tags: Record<string, string>;
  distanceMeters: number;
}

export type DuplicateSignal =
  | 'bookcase_within_25m'
  | 'bookcase_same_name'
  | 'bookcase_same_address'
  | 'brand_or_operator_match'
  | 'element_already_linked';

/** A sanitized candidate as stored in `duplicate_candidates` and shown in the preview. */
export interface CandidateSnapshot {
  type: ElementType;
  id: number;
  distance_m: number;
  /** Only relevant public tags (amenity, shop, name, brand, operator, addr:street, addr:housenumber). */
  tags: Record<string, string>;
  signals: DuplicateSignal[];
  /** Staff resolved this element as a different feature: its signals are listed but do not block. */
  resolved_different?: true;
}

export interface DuplicateEvaluation {
  /** Any blocking signal on any candidate not resolved as a different feature. */
  blocking: boolean;
  candidates: CandidateSnapshot[];
  /** Human-readable preview warnings (nearby libraries, give boxes, book shops, candidates resolved as different). */
  warnings: string[];
}

/** Which optional values staff verified on site for this write (decisions §6 preview/confirm flags). */
export interface VerifiedValues {
  name: boolean;
  brand: boolean;
  operator: boolean;
  website: boolean;
}

export type Tags = Record<string, string>;

/**
 * What moves a contribution record (state-machine.ts). `check_failed` leaves the status as it was; the record keeps
 * `lastCheckFailed` so eligibility reports it. `permission_withdrawn` changes a library field, never the status.
 */
export type ContributionEvent =
  | 'check_passed'
  | 'check_blocked'
  | 'check_failed'
  | 'resolved_same_feature'
  | 'resolved_different_feature'
  | 'resolved_unclear'
  | 'write_started'
  | 'write_succeeded'
  | 'write_failed'
  | 'reconciled_found'
  | 'reconciled_absent'
  | 'permission_withdrawn';

/** A library picked for a batch confirm (batching.ts). */
export interface BatchCandidate {
  slug: string;
  lat: number;
  lng: number;
  city: string;
  country: string;
}

/** Libraries confirmed together in one changeset: one city of one country, within the span and size limits. */
export interface ConfirmBatch {
  city: string;
  country: string;
  items: BatchCandidate[];
}
