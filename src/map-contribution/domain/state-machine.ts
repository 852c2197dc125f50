import type { ContributionEvent, ContributionStatus } from './types.js';

export const CONTRIBUTION_STATUSES: readonly ContributionStatus[] = [
  'unchecked',
  'no_match',
  'possible_duplicate',
  'already_present',
  'submitting',
  'contributed',
  'failed',
];

export const CONTRIBUTION_EVENTS: readonly ContributionEvent[] = [
  'check_passed',
  'check_blocked',
  'check_failed',
  'resolved_same_feature',
  'resolved_different_feature',
  'resolved_unclear',
  'write_started',
  'write_succeeded',
  'write_failed',
  'reconciled_found',
  'reconciled_absent',
  'permission_withdrawn',
];

type Row = Partial<Record<ContributionEvent, ContributionStatus>>;

/**
 * The spec's "Map contribution status" table as data; every pair not listed is illegal.
 *
 * - A check runs only before a write and outside one: from unchecked, no_match and possible_duplicate. A passing check
 *   moves possible_duplicate to no_match ("stays blocking until a fresh check passes"); the confirmation's rerun on
 *   no_match keeps no_match. A failed check keeps the status; the record's `lastCheckFailed` blocks eligibility.
 * - Resolutions apply to possible_duplicate only; 'different feature' and 'unclear' keep it.
 * - Only no_match is an eligible state, so only it starts a write.
 * - A failed write is left only through reconciliation: element found → contributed; nothing created → unchecked
 *   (the service clears the check so a fresh one is required).
 * - Crash recovery: a write that never finished (the process died while submitting) is reconciled the same way. The
 *   service allows it only once the attempt's write_started is older than the stuck-write age, so a live write is
 *   never reconciled under its own feet.
 * - Permission withdrawal is a library field: recorded against any status, never moving it.
 */
export const TRANSITIONS: Readonly<Record<ContributionStatus, Readonly<Row>>> = deepFreeze({
  unchecked: {
    check_passed: 'no_match',
    check_blocked: 'possible_duplicate',
    check_failed: 'unchecked',
    permission_withdrawn: 'unchecked',
  },
  no_match: {
    check_passed: 'no_match',
    check_blocked: 'possible_duplicate',
    check_failed: 'no_match',
    write_started: 'submitting',
    permission_withdrawn: 'no_match',
  },
  possible_duplicate: {
    check_passed: 'no_match',
    check_blocked: 'possible_duplicate',
    check_failed: 'possible_duplicate',
    resolved_same_feature: 'already_present',
    resolved_different_feature: 'possible_duplicate',
    resolved_unclear: 'possible_duplicate',
    permission_withdrawn: 'possible_duplicate',
  },
  already_present: { permission_withdrawn: 'already_present' },
  submitting: {
    write_succeeded: 'contributed',
    write_failed: 'failed',
    reconciled_found: 'contributed',
    reconciled_absent: 'unchecked',
    permission_withdrawn: 'submitting',
  },
  contributed: { permission_withdrawn: 'contributed' },
  failed: {
    reconciled_found: 'contributed',
    reconciled_absent: 'unchecked',
    permission_withdrawn: 'failed',
  },
});

function deepFreeze<T extends Record<string, Row>>(table: T): Readonly<T> {
  for (const row of Object.values(table)) Object.freeze(row);
  return Object.freeze(table);
}

/** Own properties only, so a status or event read from storage can never hit `toString` and friends. */
function lookup(
  from: ContributionStatus,
  event: ContributionEvent,
): ContributionStatus | undefined {
  if (!Object.hasOwn(TRANSITIONS, from)) return undefined;
  const row = TRANSITIONS[from];
  return Object.hasOwn(row, event) ? row[event] : undefined;
}

export class IllegalTransitionError extends Error {
  readonly code = 'illegal_transition';

  constructor(
    readonly from: ContributionStatus,
    readonly event: ContributionEvent,
  ) {
    super(`A contribution in status ${from} cannot take the event ${event}.`);
    this.name = 'IllegalTransitionError';
  }
}

export function canTransition(from: ContributionStatus, event: ContributionEvent): boolean {
  return lookup(from, event) !== undefined;
}

export function transition(from: ContributionStatus, event: ContributionEvent): ContributionStatus {
  const next = lookup(from, event);
  if (next === undefined) throw new IllegalTransitionError(from, event);
  return next;
}

export function allowedEvents(from: ContributionStatus): ContributionEvent[] {
  return CONTRIBUTION_EVENTS.filter((event) => canTransition(from, event));
}
