import {
  CONTRIBUTION_EVENTS,
  CONTRIBUTION_STATUSES,
  IllegalTransitionError,
  TRANSITIONS,
  allowedEvents,
  canTransition,
  transition,
} from './state-machine.js';
import type { ContributionEvent, ContributionStatus } from './types.js';

type Row = [ContributionStatus, ContributionEvent, ContributionStatus];

/**
 * Written out independently of TRANSITIONS, in the form of the spec's table (state, moved by, next state) plus the
 * decisions documented there; every pair not listed is illegal.
 */
const LEGAL: Row[] = [
  // Duplicate check: a pass clears a possible duplicate, a failure keeps the status.
  ['unchecked', 'check_passed', 'no_match'],
  ['no_match', 'check_passed', 'no_match'],
  ['possible_duplicate', 'check_passed', 'no_match'],
  ['unchecked', 'check_blocked', 'possible_duplicate'],
  ['no_match', 'check_blocked', 'possible_duplicate'],
  ['possible_duplicate', 'check_blocked', 'possible_duplicate'],
  ['unchecked', 'check_failed', 'unchecked'],
  ['no_match', 'check_failed', 'no_match'],
  ['possible_duplicate', 'check_failed', 'possible_duplicate'],
  // Administrator resolves a possible duplicate.
  ['possible_duplicate', 'resolved_same_feature', 'already_present'],
  ['possible_duplicate', 'resolved_different_feature', 'possible_duplicate'],
  ['possible_duplicate', 'resolved_unclear', 'possible_duplicate'],
  // The confirmed write.
  ['no_match', 'write_started', 'submitting'],
  ['submitting', 'write_succeeded', 'contributed'],
  ['submitting', 'write_failed', 'failed'],
  // Reconciliation of a failed or unfinished write.
  ['submitting', 'reconciled_found', 'contributed'],
  ['failed', 'reconciled_found', 'contributed'],
  ['submitting', 'reconciled_absent', 'unchecked'],
  ['failed', 'reconciled_absent', 'unchecked'],
  // Permission withdrawal is recorded against any status and never moves it.
  ['unchecked', 'permission_withdrawn', 'unchecked'],
  ['no_match', 'permission_withdrawn', 'no_match'],
  ['possible_duplicate', 'permission_withdrawn', 'possible_duplicate'],
  ['already_present', 'permission_withdrawn', 'already_present'],
  ['submitting', 'permission_withdrawn', 'submitting'],
  ['contributed', 'permission_withdrawn', 'contributed'],
  ['failed', 'permission_withdrawn', 'failed'],
];

const EXPECTED: Partial<
  Record<ContributionStatus, Partial<Record<ContributionEvent, ContributionStatus>>>
> = {};
for (const [from, event, to] of LEGAL) EXPECTED[from] = { ...EXPECTED[from], [event]: to };

const PAIRS = CONTRIBUTION_STATUSES.flatMap((from) =>
  CONTRIBUTION_EVENTS.map(
    (event) => [from, event, EXPECTED[from]?.[event] ?? 'IllegalTransitionError'] as const,
  ),
);

describe('contribution state machine', () => {
  it('covers 7 statuses × 12 events', () => {
    expect(CONTRIBUTION_STATUSES).toHaveLength(7);
    expect(CONTRIBUTION_EVENTS).toHaveLength(12);
    expect(PAIRS).toHaveLength(84);
  });

  it('lists each legal pair once', () => {
    expect(new Set(LEGAL.map(([from, event]) => `${from} ${event}`)).size).toBe(LEGAL.length);
  });

  it.each(PAIRS)('%s + %s → %s', (from, event, expected) => {
    if (expected === 'IllegalTransitionError') {
      expect(canTransition(from, event)).toBe(false);
      expect(() => transition(from, event)).toThrow(IllegalTransitionError);
      try {
        transition(from, event);
      } catch (error) {
        expect(error).toMatchObject({ code: 'illegal_transition', from, event });
      }
    } else {
      expect(canTransition(from, event)).toBe(true);
      expect(transition(from, event)).toBe(expected);
    }
  });

  it('the table holds nothing beyond the expected pairs', () => {
    expect(TRANSITIONS).toEqual(EXPECTED);
  });

  it('lists the allowed events per status', () => {
    expect(allowedEvents('no_match')).toEqual([
      'check_passed',
      'check_blocked',
      'check_failed',
      'write_started',
      'permission_withdrawn',
    ]);
    expect(allowedEvents('contributed')).toEqual(['permission_withdrawn']);
  });

  it('only no_match starts a write', () => {
    const starters = CONTRIBUTION_STATUSES.filter((status) =>
      canTransition(status, 'write_started'),
    );
    expect(starters).toEqual(['no_match']);
  });

  it('withdrawal never moves the status', () => {
    for (const status of CONTRIBUTION_STATUSES) {
      expect(transition(status, 'permission_withdrawn')).toBe(status);
    }
  });

  it('a failed check never moves the status', () => {
    for (const status of CONTRIBUTION_STATUSES.filter((s) => canTransition(s, 'check_failed'))) {
      expect(transition(status, 'check_failed')).toBe(status);
    }
  });

  it('rejects statuses and events from storage that are not in the vocabulary', () => {
    const cases: [string, string][] = [
      ['bogus', 'check_passed'],
      ['constructor', 'check_passed'],
      ['no_match', 'toString'],
      ['no_match', '__proto__'],
      ['no_match', 'hasOwnProperty'],
    ];
    for (const [from, event] of cases) {
      expect(() => transition(from as ContributionStatus, event as ContributionEvent)).toThrow(
        IllegalTransitionError,
      );
    }
  });

  it('the table cannot be changed at run time', () => {
    expect(Object.isFrozen(TRANSITIONS)).toBe(true);
    expect(Object.isFrozen(TRANSITIONS.no_match)).toBe(true);
  });

  it('walks the happy path, the duplicate path and the reconciliation paths', () => {
    const walk = (events: ContributionEvent[], start: ContributionStatus = 'unchecked') =>
      events.reduce((status, event) => transition(status, event), start);
    expect(walk(['check_passed', 'check_passed', 'write_started', 'write_succeeded'])).toBe(
      'contributed',
    );
    expect(walk(['check_blocked', 'resolved_different_feature', 'check_passed'])).toBe('no_match');
    expect(walk(['check_blocked', 'resolved_same_feature'])).toBe('already_present');
    expect(walk(['check_passed', 'write_started', 'write_failed', 'reconciled_absent'])).toBe(
      'unchecked',
    );
    expect(walk(['check_passed', 'write_started', 'write_failed', 'reconciled_found'])).toBe(
      'contributed',
    );
    expect(walk(['check_passed', 'write_started', 'reconciled_found'])).toBe('contributed');
    expect(walk(['check_passed', 'write_started', 'reconciled_absent'])).toBe('unchecked');
    expect(() => walk(['check_passed', 'write_started', 'write_failed', 'write_started'])).toThrow(
      IllegalTransitionError,
    );
  });
});
