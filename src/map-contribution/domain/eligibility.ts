import type { Blocker, BlockerCode, ContributionFacts, LibraryFacts, WriteGates } from './types.js';

/** The order blockers are reported in (the order of api-spec "Eligibility predicate"). */
export const BLOCKER_ORDER: readonly BlockerCode[] = [
  'not_approved',
  'origin_not_user',
  'submitter_missing',
  'permission_missing',
  'mapdb_source',
  'pending_changes',
  'pending_photo',
  'element_recorded',
  'check_missing',
  'check_failed',
  'check_stale',
  'possible_duplicate',
  'writes_disabled',
];

/** Words that name the map database, its tools or its query services when they appear as a token. */
const MAPDB_WORDS = new Set([
  'openstreetmap',
  'mapdb',
  'overpass',
  'nominatim',
  'geofabrik',
  'josm',
]);

function tokens(value: string): string[] {
  return value
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * Whether a text names the map database: a word starting with `osm` (`OSM`, `osm_import`, `OSMImport`,
 * `osm2pgsql`, `osm.org`), one of MAPDB_WORDS, or `openstreetmap`/`mapdb` anywhere once spaces and punctuation are
 * gone (`Open Street Map`). Errs towards yes (`Osmanli` matches): a false match only withholds a contribution.
 */
export function namesMapDatabase(text: string): boolean {
  const compact = text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  if (compact.includes('openstreetmap') || compact.includes('mapdb')) return true;
  return tokens(text).some((token) => token.startsWith('osm') || MAPDB_WORDS.has(token));
}

/**
 * Whether `external_id` holds (or may hold) a map element identifier: anything naming the map database
 * (`osm:node:1`, `https://www.openstreetmap.org/node/1`, `osm_id=5`), an element reference `node/123`, `way 45`,
 * `relation:6`, `n123`, `w45`, `r6` (separators `/ : _ - #` or a space; case-insensitive; whole value), or a bare
 * number (which cannot be told apart from an element id). Other ids (`BC-000123`, a UUID, `https://example.org/node/5`)
 * do not match.
 */
export function isMapElementIdentifier(externalId: string): boolean {
  const value = externalId.trim().toLowerCase();
  if (value === '') return false;
  if (namesMapDatabase(value)) return true;
  if (/^-?\d+$/.test(value)) return true;
  return /^(?:node|way|relation|[nwr])[\s/:_#-]?\d+$/.test(value);
}

export function identifiesMapDatabase(
  library: Pick<LibraryFacts, 'source' | 'externalId'>,
): boolean {
  return namesMapDatabase(library.source) || isMapElementIdentifier(library.externalId);
}

const RECORDED_STATUSES = new Set(['already_present', 'submitting', 'contributed', 'failed']);

export interface EligibilityOptions {
  /**
   * Set by the write transaction. The conditions are the same for the admin filter, the preview and the write
   * (api-spec: one predicate); only the wording says the write is refused.
   */
  forWrite?: boolean;
}

function disabledGates(gates: WriteGates): string[] {
  const reasons: string[] = [];
  if (gates.killSwitchOn !== true) reasons.push('the kill switch is off (MAPDB_WRITE_ENABLED)');
  if (gates.allLaunchGates !== true) {
    reasons.push('not every launch gate is named in MAPDB_LAUNCH_GATES');
  }
  if (gates.writeApiAllowed !== true) {
    reasons.push('allow_write_api is not confirmed for the current token');
  }
  if (gates.tokenDisabled !== false) {
    reasons.push('the map API answered 401 for the current token');
  }
  return reasons;
}

/** Stale beyond the age limit either way: a check time further in the future than that is not trusted either. */
function checkIsStale(checkedAt: Date, now: Date, maxCheckAgeSeconds: number): boolean {
  const age = now.getTime() - checkedAt.getTime();
  if (!Number.isFinite(age)) return true;
  return Math.abs(age) > maxCheckAgeSeconds * 1000;
}

/**
 * api-spec "Eligibility predicate": every failing condition, in BLOCKER_ORDER. Fail-closed: anything but the
 * exact expected value (true, 'approved', 'user', a number) counts as failing.
 *
 * - element_recorded: an element type or id is recorded, or the status is already_present, submitting,
 *   contributed or failed (a failed write may have created the node; reconcile first).
 * - check_missing: no completed check on record (checkedAt null, or status unchecked) and the last attempt did not
 *   fail; check_failed: the last attempt failed (reported instead of check_missing);
 *   check_stale: checkedAt more than maxCheckAgeSeconds from `now` (exactly the maximum age is still fresh).
 * - possible_duplicate: status possible_duplicate.
 * - writes_disabled: one blocker naming every closed gate.
 * So an eligible record is always in no_match, the one state a write may start from.
 */
export function evaluateEligibility(
  library: LibraryFacts,
  contribution: ContributionFacts,
  gates: WriteGates,
  now: Date,
  maxCheckAgeSeconds: number,
  options: EligibilityOptions = {},
): Blocker[] {
  if (!Number.isFinite(now.getTime())) throw new RangeError('now must be a valid Date');
  if (!Number.isFinite(maxCheckAgeSeconds) || maxCheckAgeSeconds <= 0) {
    throw new RangeError('maxCheckAgeSeconds must be a positive number');
  }
  const found = new Map<BlockerCode, string>();
  const block = (code: BlockerCode, message: string) => found.set(code, message);

  if (library.status !== 'approved') {
    block('not_approved', `The library is ${String(library.status)}, not approved.`);
  }
  if (library.submissionOrigin !== 'user') {
    block(
      'origin_not_user',
      `The library was not submitted by a user (origin ${String(library.submissionOrigin)}).`,
    );
  }
  if (typeof library.createdBy !== 'number') {
    block('submitter_missing', 'The submitting account no longer exists.');
  }
  if (library.mapdbSubmissionAllowed !== true) {
    block('permission_missing', 'The submitter did not permit contribution to the map database.');
  }
  if (identifiesMapDatabase(library)) {
    block(
      'mapdb_source',
      'The source or external id shows the data came from the map database; it is not contributed back.',
    );
  }
  if (library.hasPendingChanges !== false) {
    block('pending_changes', 'A staged edit of the library awaits moderation.');
  }
  if (library.hasPendingPhoto !== false) {
    block('pending_photo', 'A staged photo of the library awaits moderation.');
  }
  if (
    contribution.elementType !== null ||
    contribution.elementId !== null ||
    RECORDED_STATUSES.has(contribution.status)
  ) {
    const detail =
      contribution.status === 'failed'
        ? 'the last write failed and must be reconciled first'
        : contribution.elementType !== null || contribution.elementId !== null
          ? `${String(contribution.elementType)}/${String(contribution.elementId)} is recorded`
          : `the contribution is ${contribution.status}`;
    block('element_recorded', `A map element is already recorded or may exist: ${detail}.`);
  }
  if (contribution.lastCheckFailed !== false) {
    block('check_failed', 'The last duplicate check failed; run it again.');
  } else if (contribution.checkedAt === null || contribution.status === 'unchecked') {
    block('check_missing', 'No duplicate check has been completed; run one.');
  }
  if (
    contribution.checkedAt !== null &&
    checkIsStale(contribution.checkedAt, now, maxCheckAgeSeconds)
  ) {
    block(
      'check_stale',
      `The last duplicate check is older than ${maxCheckAgeSeconds} seconds; run it again.`,
    );
  }
  if (contribution.status === 'possible_duplicate') {
    block(
      'possible_duplicate',
      'A possible duplicate on the map is unresolved; resolve it, then run a fresh check.',
    );
  }
  const closed = disabledGates(gates);
  if (closed.length > 0) {
    block('writes_disabled', `Writes to the map database are disabled: ${closed.join('; ')}.`);
  }

  const prefix = options.forWrite ? 'Write refused: ' : '';
  return BLOCKER_ORDER.filter((code) => found.has(code)).map((code) => ({
    code,
    message: `${prefix}${found.get(code)}`,
  }));
}

export function isEligible(
  library: LibraryFacts,
  contribution: ContributionFacts,
  gates: WriteGates,
  now: Date,
  maxCheckAgeSeconds: number,
  options: EligibilityOptions = {},
): boolean {
  return (
    evaluateEligibility(library, contribution, gates, now, maxCheckAgeSeconds, options).length === 0
  );
}
