import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Transaction } from '../database/database.js';
import { Clock } from '../common/clock.js';
import { AppConfig, LAUNCH_GATES } from '../config/app-config.js';
import { MapApiClient, MapApiError, type MapApiCapabilities } from './adapters/map-api.client.js';
import type { ContributionLibraryRow, ContributionRow } from './contribution-rows.js';
import { contributionFacts, libraryFacts } from './contribution.mapper.js';
import { ContributionRefused } from './domain/refusal.js';
import { CAPABILITIES_MAX_AGE_MS } from './domain/timing.js';
import type { Blocker, WriteGates } from './domain/types.js';
import {
  apiStatusBlocker,
  contributionBlockers,
  permissionsDue,
  writeGates,
  type GateSettings,
  type WriteState,
} from './domain/write-gates.js';
import { MAP_API_CLIENT } from './map-contribution.tokens.js';
import { WriteStateRepository } from './write-state.repository.js';

/** 401 and 403 from the map API both mean the token may not write: writes stay off until it changes. */
export function disablesWrites(error: unknown): error is MapApiError {
  return (
    error instanceof MapApiError && (error.code === 'unauthorized' || error.code === 'forbidden')
  );
}

/**
 * The kill switch and its companions, with their state: writes need MAPDB_WRITE_ENABLED, every launch gate,
 * allow_write_api confirmed for the current token, no write-disabling 401 recorded since the token last changed, and
 * an API that reports itself writable. The rules are `domain/write-gates.ts`; this service reads and records their
 * state. The token is identified by a fingerprint; it is never stored.
 */
@Injectable()
export class WriteGatesService {
  private capabilitiesRead: { value: MapApiCapabilities; at: number } | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly state: WriteStateRepository,
    @Inject(MAP_API_CLIENT) private readonly apiClient: MapApiClient | null,
    private readonly clock: Clock,
  ) {}

  /** The map API client; only reachable once the write gates (which need its settings) are open. */
  get api(): MapApiClient {
    if (!this.apiClient) {
      throw new ContributionRefused([
        { code: 'writes_disabled', message: 'The map API is not configured.' },
      ]);
    }
    return this.apiClient;
  }

  private settings(): GateSettings {
    const mapdb = this.config.mapdb;
    return {
      writeEnabled: mapdb.writeEnabled,
      apiConfigured: Boolean(mapdb.apiBaseUrl && mapdb.oauthAccessToken),
      allLaunchGates: LAUNCH_GATES.every((gate) => mapdb.launchGates.includes(gate)),
      planConfigured: Boolean(mapdb.planUrl),
      duplicateCheckMaxAgeSeconds: mapdb.duplicateCheckMaxAgeSeconds,
    };
  }

  private fingerprint(): string {
    return createHash('sha256')
      .update(this.config.mapdb.oauthAccessToken ?? '')
      .digest('hex');
  }

  private gatesOf(state: WriteState | null): WriteGates {
    return writeGates(state, this.settings(), this.fingerprint());
  }

  /**
   * The gates as stored now. With `tx` (a transaction, e.g. the write claim), the state is read on that
   * transaction's connection: asking the pool for a second one while every connection waits on the write lock would
   * deadlock.
   */
  async current(tx?: Transaction): Promise<WriteGates> {
    return this.gatesOf(await this.state.read(tx));
  }

  /**
   * The gates before a write action is offered or taken: allow_write_api is (re)confirmed through GET
   * /api/0.6/permissions when due. One read of the state; the call only when due, outside any transaction.
   */
  async refreshed(): Promise<WriteGates> {
    const state = await this.state.read();
    if (!permissionsDue(state, this.settings(), this.fingerprint(), this.clock.now()))
      return this.gatesOf(state);
    try {
      const { allowWriteApi } = await this.api.permissions();
      const saved: WriteState = {
        token_fingerprint: this.fingerprint(),
        write_api_allowed: allowWriteApi,
        permissions_checked_at: this.clock.date(),
        disabled_at: null,
        disabled_reason: '',
      };
      await this.state.save(saved);
      return this.gatesOf(saved);
    } catch (error) {
      if (disablesWrites(error)) return this.disable(error, state);
      return this.gatesOf(state);
    }
  }

  /** Every failing condition of a library now (eligibility and the gates: the one predicate). */
  blockers(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    gates: WriteGates,
  ): Blocker[] {
    return contributionBlockers(
      libraryFacts(library),
      contributionFacts(record),
      gates,
      this.settings(),
      this.clock.date(),
    );
  }

  /**
   * A 401/403 from the map API: writes stay disabled until the token changes. Pass the state when it was just read.
   * Returns the gates as they are now.
   */
  async disable(error: MapApiError, known?: WriteState | null): Promise<WriteGates> {
    const state = known === undefined ? await this.state.read() : known;
    const saved: WriteState = {
      token_fingerprint: this.fingerprint(),
      write_api_allowed: false,
      permissions_checked_at: state?.permissions_checked_at ?? null,
      disabled_at: this.clock.date(),
      disabled_reason: `http_${error.status ?? 401}`,
    };
    await this.state.save(saved);
    return this.gatesOf(saved);
  }

  /**
   * The map API's capabilities for a write: read (GET /api/0.6/capabilities) when none were read within
   * CAPABILITIES_MAX_AGE_MS (or `fresh`), otherwise the kept ones. Unreadable capabilities, or an API that reports
   * itself `readonly` or `offline`, refuse the write (`writes_disabled`) before anything is sent.
   */
  async capabilities(fresh = false): Promise<MapApiCapabilities> {
    const now = this.clock.now();
    const kept = this.capabilitiesRead;
    if (!fresh && kept && now - kept.at < CAPABILITIES_MAX_AGE_MS) return kept.value;
    this.capabilitiesRead = null;
    let capabilities: MapApiCapabilities;
    try {
      capabilities = await this.api.capabilities();
    } catch (error) {
      if (disablesWrites(error)) await this.disable(error);
      throw new ContributionRefused([
        {
          code: 'writes_disabled',
          message: 'The map API capabilities could not be read; nothing was written.',
        },
      ]);
    }
    const closed = apiStatusBlocker(capabilities.status.api);
    if (closed) throw new ContributionRefused([closed]);
    this.capabilitiesRead = { value: capabilities, at: now };
    return capabilities;
  }
}
