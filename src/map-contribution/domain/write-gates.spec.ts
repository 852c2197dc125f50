import fc from 'fast-check';
import { ContributionRefused, REFUSED_MESSAGE } from './refusal.js';
import { PERMISSIONS_TTL_MS } from './timing.js';
import { library } from './tag-mapping-fixtures.js';
import type { Blocker, BlockerCode, ContributionFacts } from './types.js';
import {
  apiStatusBlocker,
  blockersBeforeCheck,
  closedGates,
  contributionBlockers,
  elementLimitBlocker,
  permissionsDue,
  writeGates,
  type GateSettings,
  type WriteState,
} from './write-gates.js';

const NOW = new Date('2026-06-15T12:00:00.000Z');
const TOKEN = 'f'.repeat(64);

const settings = (overrides: Partial<GateSettings> = {}): GateSettings => ({
  writeEnabled: true,
  apiConfigured: true,
  allLaunchGates: true,
  planConfigured: true,
  duplicateCheckMaxAgeSeconds: 900,
  ...overrides,
});

const state = (overrides: Partial<WriteState> = {}): WriteState => ({
  token_fingerprint: TOKEN,
  write_api_allowed: true,
  permissions_checked_at: new Date(NOW.getTime() - 60_000),
  disabled_at: null,
  disabled_reason: '',
  ...overrides,
});

const eligibleLibrary = library();

const checked: ContributionFacts = {
  status: 'no_match',
  checkedAt: new Date(NOW.getTime() - 60_000),
  lastCheckFailed: false,
  elementType: null,
  elementId: null,
};

const blocker = (code: BlockerCode): Blocker => ({ code, message: code });

describe('write gates', () => {
  it('open only for the same token with allow_write_api confirmed and no 401 recorded', () => {
    expect(writeGates(state(), settings(), TOKEN)).toEqual({
      killSwitchOn: true,
      allLaunchGates: true,
      writeApiAllowed: true,
      tokenDisabled: false,
    });
    expect(writeGates(state(), settings(), 'e'.repeat(64))).toMatchObject({
      writeApiAllowed: false,
      tokenDisabled: false,
    });
    expect(writeGates(state({ disabled_at: NOW }), settings(), TOKEN).tokenDisabled).toBe(true);
    expect(writeGates(null, settings(), TOKEN).writeApiAllowed).toBe(false);
    expect(writeGates(state(), settings({ apiConfigured: false }), TOKEN).killSwitchOn).toBe(false);
    expect(writeGates(state(), settings({ writeEnabled: false }), TOKEN).killSwitchOn).toBe(false);
  });

  it('permissions are due for a new token, a refusal, or after their time to live; never with writes off', () => {
    const now = NOW.getTime();
    expect(permissionsDue(state(), settings(), TOKEN, now)).toBe(false);
    expect(permissionsDue(null, settings(), TOKEN, now)).toBe(true);
    expect(permissionsDue(state(), settings(), 'e'.repeat(64), now)).toBe(true);
    expect(permissionsDue(state({ write_api_allowed: false }), settings(), TOKEN, now)).toBe(true);
    expect(
      permissionsDue(state({ disabled_at: NOW, write_api_allowed: false }), settings(), TOKEN, now),
    ).toBe(false);
    const checkedAt = state().permissions_checked_at!.getTime();
    expect(permissionsDue(state(), settings(), TOKEN, checkedAt + PERMISSIONS_TTL_MS)).toBe(false);
    expect(permissionsDue(state(), settings(), TOKEN, checkedAt + PERMISSIONS_TTL_MS + 1)).toBe(
      true,
    );
    expect(permissionsDue(null, settings({ writeEnabled: false }), TOKEN, now)).toBe(false);
  });

  it('without the published plan every library is blocked by writes_disabled, once', () => {
    const gates = writeGates(state(), settings(), TOKEN);
    expect(contributionBlockers(eligibleLibrary, checked, gates, settings(), NOW)).toEqual([]);
    const noPlan = contributionBlockers(
      eligibleLibrary,
      checked,
      gates,
      settings({ planConfigured: false }),
      NOW,
    );
    expect(noPlan).toEqual([
      {
        code: 'writes_disabled',
        message: 'Writes to the map database are disabled: MAPDB_PLAN_URL is not configured.',
      },
    ]);
    const closed = writeGates(state(), settings({ writeEnabled: false }), TOKEN);
    const both = contributionBlockers(
      eligibleLibrary,
      checked,
      closed,
      settings({ planConfigured: false, writeEnabled: false }),
      NOW,
    );
    expect(both.filter((b) => b.code === 'writes_disabled')).toHaveLength(1);
  });

  it('a confirm is refused up front for everything but the check it reruns itself', () => {
    const codes: BlockerCode[] = [
      'not_approved',
      'check_missing',
      'check_failed',
      'check_stale',
      'possible_duplicate',
      'writes_disabled',
    ];
    expect(blockersBeforeCheck(codes.map(blocker)).map((b) => b.code)).toEqual([
      'not_approved',
      'possible_duplicate',
      'writes_disabled',
    ]);
    expect(closedGates(codes.map(blocker)).map((b) => b.code)).toEqual(['writes_disabled']);
  });

  it('blockersBeforeCheck keeps order and drops only check blockers (property)', () => {
    const code = fc.constantFrom<BlockerCode>(
      'not_approved',
      'pending_photo',
      'check_missing',
      'check_failed',
      'check_stale',
      'writes_disabled',
    );
    fc.assert(
      fc.property(fc.array(code), (list) => {
        const kept = blockersBeforeCheck(list.map(blocker)).map((b) => b.code);
        expect(kept).toEqual(list.filter((c) => !c.startsWith('check_')));
      }),
    );
  });

  it('the map API status and element limit gate a write', () => {
    expect(apiStatusBlocker(null)).toBeNull();
    expect(apiStatusBlocker('online')).toBeNull();
    for (const status of ['readonly', 'offline']) {
      expect(apiStatusBlocker(status)).toEqual({
        code: 'writes_disabled',
        message: `The map API reports its status as ${status}: it accepts no writes now; nothing was written.`,
      });
    }
    expect(elementLimitBlocker(1)).toBeNull();
    expect(elementLimitBlocker(0)?.code).toBe('writes_disabled');
  });

  it('a refusal carries its blockers and the default wording', () => {
    const refused = new ContributionRefused([blocker('not_approved')]);
    expect(refused).toBeInstanceOf(Error);
    expect([refused.name, refused.message, refused.blockers]).toEqual([
      'ContributionRefused',
      REFUSED_MESSAGE,
      [blocker('not_approved')],
    ]);
    expect(new ContributionRefused([], 'Other.').message).toBe('Other.');
  });
});
