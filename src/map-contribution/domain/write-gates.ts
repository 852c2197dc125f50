/**
 * The write gates (decisions §6): the kill switch and its companions, the published-plan gate and the map API's own
 * status. Pure: the caller passes the stored write state, the settings, the token's fingerprint and the time.
 */
import { evaluateEligibility } from './eligibility.js';
import { PERMISSIONS_TTL_MS } from './timing.js';
import type { Blocker, ContributionFacts, LibraryFacts, WriteGates } from './types.js';

/** The stored write state (`map_write_state`): what the map API said about the current token. */
export interface WriteState {
  token_fingerprint: string;
  write_api_allowed: boolean;
  permissions_checked_at: Date | null;
  disabled_at: Date | null;
  disabled_reason: string;
}

/** The settings the gates read (MAPDB_*). */
export interface GateSettings {
  writeEnabled: boolean;
  /** MAPDB_API_BASE_URL and MAPDB_OAUTH_ACCESS_TOKEN are both set. */
  apiConfigured: boolean;
  /** Every launch gate is named in MAPDB_LAUNCH_GATES. */
  allLaunchGates: boolean;
  /** MAPDB_PLAN_URL is set: every changeset names the published plan. */
  planConfigured: boolean;
  duplicateCheckMaxAgeSeconds: number;
}

/** The gates as the stored state and the settings leave them; the state only counts for the same token. */
export function writeGates(
  state: WriteState | null,
  settings: GateSettings,
  fingerprint: string,
): WriteGates {
  const sameToken = state !== null && state.token_fingerprint === fingerprint;
  return {
    killSwitchOn: settings.writeEnabled && settings.apiConfigured,
    allLaunchGates: settings.allLaunchGates,
    writeApiAllowed: sameToken && state.write_api_allowed,
    tokenDisabled: sameToken && state.disabled_at !== null,
  };
}

/** Whether allow_write_api should be (re)confirmed before a write action is offered. */
export function permissionsDue(
  state: WriteState | null,
  settings: GateSettings,
  fingerprint: string,
  now: number,
): boolean {
  if (!settings.writeEnabled) return false;
  if (!state || state.token_fingerprint !== fingerprint) return true;
  if (state.disabled_at) return false;
  const checked = state.permissions_checked_at
    ? new Date(state.permissions_checked_at).getTime()
    : 0;
  return !state.write_api_allowed || now - checked > PERMISSIONS_TTL_MS;
}

/**
 * Every failing condition of a library (the one predicate of the admin filter, the preview and the write), plus
 * the plan gate: without MAPDB_PLAN_URL nothing may be written.
 */
export function contributionBlockers(
  library: LibraryFacts,
  record: ContributionFacts,
  gates: WriteGates,
  settings: GateSettings,
  now: Date,
): Blocker[] {
  const blockers = evaluateEligibility(
    library,
    record,
    gates,
    now,
    settings.duplicateCheckMaxAgeSeconds,
  );
  if (!settings.planConfigured && !blockers.some((b) => b.code === 'writes_disabled')) {
    blockers.push({
      code: 'writes_disabled',
      message: 'Writes to the map database are disabled: MAPDB_PLAN_URL is not configured.',
    });
  }
  return blockers;
}

/** The check blockers a confirm clears itself by rerunning the check. */
export const CHECK_BLOCKERS: readonly string[] = ['check_missing', 'check_stale', 'check_failed'];

/**
 * The blockers a confirm cannot clear itself: it reruns the duplicate check, so a missing, stale or failed check
 * does not refuse it up front (the re-evaluation under the write lock still sees the fresh check's outcome).
 */
export function blockersBeforeCheck(blockers: Blocker[]): Blocker[] {
  return blockers.filter((b) => !CHECK_BLOCKERS.includes(b.code));
}

/** Only the closed gates among the blockers (a batch refuses as a whole when writes are off). */
export function closedGates(blockers: Blocker[]): Blocker[] {
  return blockers.filter((b) => b.code === 'writes_disabled');
}

/** API statuses that allow no write (the capabilities' `<status api>`). */
const NO_WRITE_STATUSES: readonly string[] = ['readonly', 'offline'];

/** The map API's own gate, from its capabilities' `<status api>`: null when the API accepts writes. */
export function apiStatusBlocker(apiStatus: string | null | undefined): Blocker | null {
  const status = apiStatus ?? 'online';
  if (!NO_WRITE_STATUSES.includes(status)) return null;
  return {
    code: 'writes_disabled',
    message: `The map API reports its status as ${status}: it accepts no writes now; nothing was written.`,
  };
}

/** A changeset must be able to hold the node: null when the capabilities allow at least one element. */
export function elementLimitBlocker(changesetMaximumElements: number): Blocker | null {
  if (changesetMaximumElements >= 1) return null;
  return { code: 'writes_disabled', message: 'The map API allows no element per changeset.' };
}
