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

/** Written out independently of TRANSITIONS: the spec's table plus the decisions documented there. */
const EXPECTED: Record<
  ContributionStatus,
  Partial<Record<ContributionEvent, ContributionStatus>>
> = {
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
};

const PAIRS = CONTRIBUTION_STATUSES.flatMap((from) =>
  CONTRIBUTION_EVENTS.map(
    (event) => [from, event, EXPECTED[from][event] ?? 'IllegalTransitionError'] as const,
  ),
);

describe('contribution state machine', () => {
  it('covers 7 statuses × 12 events', () => {
    expect(CONTRIBUTION_STATUSES).toHaveLength(7);
    expect(CONTRIBUTION_EVENTS).toHaveLength(12);
    expect(PAIRS).toHaveLength(84);
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
