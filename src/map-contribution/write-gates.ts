import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { AppConfig, LAUNCH_GATES } from '../config/app-config.js';
import type { WriteGates } from './domain/types.js';
import { MapContributionRepository } from './map-contribution.repository.js';

/** How long a confirmed allow_write_api stays trusted before GET /api/0.6/permissions is asked again. */
const PERMISSIONS_TTL_MS = 60 * 60 * 1000;

/**
 * The kill switch and its companions: writes need MAPDB_WRITE_ENABLED, every launch gate, allow_write_api
 * confirmed for the current token, and no write-disabling 401 recorded since the token last changed. The token is
 * identified by a fingerprint; it is never stored.
 */
@Injectable()
export class WriteGatesService {
  constructor(
    private readonly config: AppConfig,
    private readonly repository: MapContributionRepository,
    private readonly clock: Clock,
  ) {}

  private fingerprint(): string {
    return createHash('sha256')
      .update(this.config.mapdb.oauthAccessToken ?? '')
      .digest('hex');
  }

  /**
   * With `manager` (inside a transaction, e.g. the write claim), the state is read on that transaction's connection:
   * asking the pool for a second one while every connection waits on the write lock would deadlock.
   */
  async current(manager?: EntityManager): Promise<WriteGates> {
    const state = await this.repository.writeState(manager);
    const sameToken = state !== null && state.token_fingerprint === this.fingerprint();
    return {
      killSwitchOn:
        this.config.mapdb.writeEnabled &&
        Boolean(this.config.mapdb.apiBaseUrl && this.config.mapdb.oauthAccessToken),
      allLaunchGates: LAUNCH_GATES.every((gate) => this.config.mapdb.launchGates.includes(gate)),
      writeApiAllowed: sameToken && state.write_api_allowed,
      tokenDisabled: sameToken && state.disabled_at !== null,
    };
  }

  /** Whether allow_write_api should be (re)confirmed before a write action is offered. */
  async permissionsDue(): Promise<boolean> {
    if (!this.config.mapdb.writeEnabled) return false;
    const state = await this.repository.writeState();
    if (!state || state.token_fingerprint !== this.fingerprint()) return true;
    if (state.disabled_at) return false;
    const checked = state.permissions_checked_at
      ? new Date(state.permissions_checked_at).getTime()
      : 0;
    return !state.write_api_allowed || this.clock.now() - checked > PERMISSIONS_TTL_MS;
  }

  async recordPermissions(allowWriteApi: boolean): Promise<void> {
    await this.repository.saveWriteState({
      token_fingerprint: this.fingerprint(),
      write_api_allowed: allowWriteApi,
      permissions_checked_at: this.clock.date(),
      disabled_at: null,
      disabled_reason: '',
    });
  }

  /** A 401 from the map API: writes stay disabled until the token changes. */
  async disable(reason: string): Promise<void> {
    const state = await this.repository.writeState();
    await this.repository.saveWriteState({
      token_fingerprint: this.fingerprint(),
      write_api_allowed: false,
      permissions_checked_at: state?.permissions_checked_at ?? null,
      disabled_at: this.clock.date(),
      disabled_reason: reason,
    });
  }
}
