import fc from 'fast-check';
import { BLOCKER_ORDER, evaluateEligibility, isEligible } from './eligibility.js';
import { CONTRIBUTION_STATUSES } from './state-machine.js';
import { library as eligibleLibrary } from './tag-mapping-fixtures.js';
import type { BlockerCode, ContributionFacts, LibraryFacts, WriteGates } from './types.js';

const NOW = new Date('2026-06-15T12:00:00.000Z');
const MAX_AGE = 900;
const secondsAgo = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);

/** The shared eligible library, with the values these cases were written against. */
const library = (overrides: Partial<LibraryFacts> = {}): LibraryFacts =>
  eligibleLibrary({
    name: 'Bücherschrank am Lindenplatz',
    isIndoor: false,
    isLit: true,
    wheelchairAccessible: 'yes',
    brand: '',
    website: '',
    ...overrides,
  });

function contribution(overrides: Partial<ContributionFacts> = {}): ContributionFacts {
  return {
    status: 'no_match',
    checkedAt: secondsAgo(60),
    lastCheckFailed: false,
    elementType: null,
    elementId: null,
    ...overrides,
  };
}

function gates(overrides: Partial<WriteGates> = {}): WriteGates {
  return {
    killSwitchOn: true,
    allLaunchGates: true,
    writeApiAllowed: true,
    tokenDisabled: false,
    ...overrides,
  };
}

interface Case {
  lib?: Partial<LibraryFacts>;
  con?: Partial<ContributionFacts>;
  gate?: Partial<WriteGates>;
}

function codes({ lib, con, gate }: Case): BlockerCode[] {
  return evaluateEligibility(library(lib), contribution(con), gates(gate), NOW, MAX_AGE).map(
    (blocker) => blocker.code,
  );
}

describe('evaluateEligibility', () => {
  it('an approved, user-submitted, permitted, freshly checked no_match library with open gates is eligible', () => {
    expect(codes({})).toEqual([]);
    expect(isEligible(library(), contribution(), gates(), NOW, MAX_AGE)).toBe(true);
  });

  const SINGLE: [BlockerCode, string, Case][] = [
    ['not_approved', 'pending', { lib: { status: 'pending' } }],
    ['not_approved', 'rejected', { lib: { status: 'rejected' } }],
    ['origin_not_user', 'legacy', { lib: { submissionOrigin: 'legacy' } }],
    ['origin_not_user', 'import', { lib: { submissionOrigin: 'import' } }],
    ['origin_not_user', 'staff', { lib: { submissionOrigin: 'staff' } }],
    ['submitter_missing', 'ownerless (account deleted)', { lib: { createdBy: null } }],
    ['permission_missing', 'explicit false', { lib: { mapdbSubmissionAllowed: false } }],
    [
      'permission_missing',
      'omitted (undefined at run time)',
      { lib: { mapdbSubmissionAllowed: undefined as unknown as boolean } },
    ],
    [
      'permission_missing',
      'truthy non-boolean',
      { lib: { mapdbSubmissionAllowed: 'true' as unknown as boolean } },
    ],
    ['mapdb_source', 'source OSM', { lib: { source: 'OSM' } }],
    ['mapdb_source', 'source OSM import', { lib: { source: 'OSM import' } }],
    ['mapdb_source', 'external id node/123', { lib: { externalId: 'node/123' } }],
    ['mapdb_source', 'external id bare number', { lib: { externalId: '123456' } }],
    ['pending_changes', 'staged edit', { lib: { hasPendingChanges: true } }],
    ['pending_photo', 'staged photo', { lib: { hasPendingPhoto: true } }],
    ['element_recorded', 'element type and id', { con: { elementType: 'node', elementId: 9 } }],
    ['element_recorded', 'element id only', { con: { elementId: 9 } }],
    ['element_recorded', 'element type only', { con: { elementType: 'way' } }],
    ['element_recorded', 'already_present', { con: { status: 'already_present' } }],
    ['element_recorded', 'submitting', { con: { status: 'submitting' } }],
    ['element_recorded', 'contributed', { con: { status: 'contributed' } }],
    ['element_recorded', 'failed (reconcile first)', { con: { status: 'failed' } }],
    ['check_missing', 'never checked', { con: { checkedAt: null } }],
    ['check_missing', 'status unchecked', { con: { status: 'unchecked' } }],
    ['check_failed', 'last check failed', { con: { lastCheckFailed: true } }],
    [
      'check_failed',
      'last check failed, no completed check',
      { con: { lastCheckFailed: true, checkedAt: null } },
    ],
    [
      'check_stale',
      'one millisecond past the maximum age',
      { con: { checkedAt: new Date(NOW.getTime() - MAX_AGE * 1000 - 1) } },
    ],
    ['check_stale', 'a day old', { con: { checkedAt: secondsAgo(86_400) } }],
    [
      'check_stale',
      'beyond the maximum age in the future',
      { con: { checkedAt: secondsAgo(-MAX_AGE - 1) } },
    ],
    ['check_stale', 'an invalid date', { con: { checkedAt: new Date(Number.NaN) } }],
    ['possible_duplicate', 'unresolved', { con: { status: 'possible_duplicate' } }],
    ['writes_disabled', 'kill switch off', { gate: { killSwitchOn: false } }],
    ['writes_disabled', 'a launch gate missing', { gate: { allLaunchGates: false } }],
    ['writes_disabled', 'allow_write_api unconfirmed', { gate: { writeApiAllowed: false } }],
    ['writes_disabled', 'token disabled by a 401', { gate: { tokenDisabled: true } }],
  ];

  it.each(SINGLE)('%s alone: %s', (code, _label, change) => {
    expect(codes(change)).toEqual([code]);
  });

  it('every blocker code has at least one single-condition case', () => {
    expect(new Set(SINGLE.map(([code]) => code))).toEqual(new Set(BLOCKER_ORDER));
  });

  it('a check exactly at the maximum age is still fresh (stale means older than the maximum)', () => {
    expect(codes({ con: { checkedAt: secondsAgo(MAX_AGE) } })).toEqual([]);
    expect(codes({ con: { checkedAt: secondsAgo(-MAX_AGE) } })).toEqual([]);
    expect(codes({ con: { checkedAt: NOW } })).toEqual([]);
  });

  it('reports every failing condition at once, in the stable order', () => {
    const all = evaluateEligibility(
      library({
        status: 'pending',
        submissionOrigin: 'import',
        createdBy: null,
        mapdbSubmissionAllowed: false,
        source: 'openstreetmap',
        hasPendingChanges: true,
        hasPendingPhoto: true,
      }),
      {
        status: 'possible_duplicate',
        checkedAt: secondsAgo(10_000),
        lastCheckFailed: false,
        elementType: 'node',
        elementId: 1,
      },
      gates({ killSwitchOn: false }),
      NOW,
      MAX_AGE,
    );
    expect(all.map((blocker) => blocker.code)).toEqual(
      BLOCKER_ORDER.filter((code) => code !== 'check_missing' && code !== 'check_failed'),
    );
    expect(
      codes({ con: { status: 'unchecked', checkedAt: null, lastCheckFailed: false } }),
    ).toEqual(['check_missing']);
    expect(codes({ con: { lastCheckFailed: true, checkedAt: secondsAgo(5000) } })).toEqual([
      'check_failed',
      'check_stale',
    ]);
  });

  it('any combination of conditions yields exactly their blockers (property)', () => {
    const MUTATIONS: Record<BlockerCode, Case> = {
      not_approved: { lib: { status: 'rejected' } },
      origin_not_user: { lib: { submissionOrigin: 'legacy' } },
      submitter_missing: { lib: { createdBy: null } },
      permission_missing: { lib: { mapdbSubmissionAllowed: false } },
      mapdb_source: { lib: { externalId: 'way/45' } },
      pending_changes: { lib: { hasPendingChanges: true } },
      pending_photo: { lib: { hasPendingPhoto: true } },
      element_recorded: { con: { elementType: 'node', elementId: 3 } },
      check_missing: { con: { status: 'unchecked' } },
      check_failed: { con: { lastCheckFailed: true } },
      check_stale: { con: { checkedAt: secondsAgo(MAX_AGE + 1) } },
      possible_duplicate: { con: { status: 'possible_duplicate' } },
      writes_disabled: { gate: { tokenDisabled: true } },
    };
    fc.assert(
      fc.property(fc.subarray([...BLOCKER_ORDER]), (chosen) => {
        let picked = chosen;
        // check_failed is reported instead of check_missing; both status mutations cannot hold at once.
        if (picked.includes('check_failed') || picked.includes('possible_duplicate')) {
          picked = picked.filter((code) => code !== 'check_missing');
        }
        const merged: Case = { lib: {}, con: {}, gate: {} };
        for (const code of picked) {
          Object.assign(merged.lib!, MUTATIONS[code].lib);
          Object.assign(merged.con!, MUTATIONS[code].con);
          Object.assign(merged.gate!, MUTATIONS[code].gate);
        }
        expect(codes(merged)).toEqual(BLOCKER_ORDER.filter((code) => picked.includes(code)));
      }),
    );
  });

  it('writes_disabled is one blocker naming every closed gate', () => {
    const blockers = evaluateEligibility(
      library(),
      contribution(),
      gates({
        killSwitchOn: false,
        allLaunchGates: false,
        writeApiAllowed: false,
        tokenDisabled: true,
      }),
      NOW,
      MAX_AGE,
    );
    expect(blockers).toHaveLength(1);
    expect(blockers[0].code).toBe('writes_disabled');
    expect(blockers[0].message).toMatch(/kill switch/);
    expect(blockers[0].message).toMatch(/MAPDB_LAUNCH_GATES/);
    expect(blockers[0].message).toMatch(/allow_write_api/);
    expect(blockers[0].message).toMatch(/401/);

    const one = evaluateEligibility(
      library(),
      contribution(),
      gates({ writeApiAllowed: false }),
      NOW,
      MAX_AGE,
    );
    expect(one[0].message).toMatch(/allow_write_api/);
    expect(one[0].message).not.toMatch(/kill switch|MAPDB_LAUNCH_GATES|401/);
  });

  it('fails closed on gate values that are not exactly the open value', () => {
    const broken = {
      killSwitchOn: 'yes',
      allLaunchGates: 1,
      writeApiAllowed: true,
    } as unknown as WriteGates;
    expect(evaluateEligibility(library(), contribution(), broken, NOW, MAX_AGE)).toEqual([
      expect.objectContaining({ code: 'writes_disabled' }),
    ]);
  });

  it('every blocker carries a distinct, non-empty English message', () => {
    const messages = SINGLE.map(
      ([, , change]) =>
        evaluateEligibility(
          library(change.lib),
          contribution(change.con),
          gates(change.gate),
          NOW,
          MAX_AGE,
        )[0].message,
    );
    for (const message of messages) expect(message).toMatch(/^[A-Z].+\.$/);
    const byCode = new Map(SINGLE.map(([code], i) => [code, messages[i]]));
    expect(new Set(byCode.values()).size).toBe(BLOCKER_ORDER.length);
  });

  it('the write uses the same conditions as the filter and the preview (property)', () => {
    const arbitraryLibrary = fc.record({
      status: fc.constantFrom('pending', 'approved', 'rejected' as const),
      submissionOrigin: fc.constantFrom('legacy', 'user', 'staff', 'import' as const),
      createdBy: fc.option(fc.nat(), { nil: null }),
      mapdbSubmissionAllowed: fc.boolean(),
      source: fc.constantFrom('', 'osm', 'geojson', 'Open Street Map'),
      externalId: fc.constantFrom('', 'n5', 'BC-1'),
      hasPendingChanges: fc.boolean(),
      hasPendingPhoto: fc.boolean(),
    });
    const arbitraryContribution = fc.record({
      status: fc.constantFrom(...CONTRIBUTION_STATUSES),
      checkedAt: fc.option(fc.integer({ min: -2000, max: 2000 }).map(secondsAgo), { nil: null }),
      lastCheckFailed: fc.boolean(),
      elementType: fc.constantFrom(null, 'node' as const),
      elementId: fc.constantFrom(null, 5),
    });
    const arbitraryGates = fc.record({
      killSwitchOn: fc.boolean(),
      allLaunchGates: fc.boolean(),
      writeApiAllowed: fc.boolean(),
      tokenDisabled: fc.boolean(),
    });
    fc.assert(
      fc.property(arbitraryLibrary, arbitraryContribution, arbitraryGates, (lib, con, gate) => {
        const args = [library(lib), con, gate, NOW, MAX_AGE] as const;
        const preview = evaluateEligibility(...args);
        const write = evaluateEligibility(...args, { forWrite: true });
        expect(write.map((b) => b.code)).toEqual(preview.map((b) => b.code));
        for (const blocker of write) expect(blocker.message).toMatch(/^Write refused: /);
        // eligible implies the one state a write may start from
        if (preview.length === 0) expect(con.status).toBe('no_match');
      }),
    );
  });

  it('rejects a bad clock or a bad maximum age rather than guessing', () => {
    expect(() =>
      evaluateEligibility(library(), contribution(), gates(), new Date(Number.NaN), MAX_AGE),
    ).toThrow(RangeError);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => evaluateEligibility(library(), contribution(), gates(), NOW, bad)).toThrow(
        RangeError,
      );
    }
  });
});
