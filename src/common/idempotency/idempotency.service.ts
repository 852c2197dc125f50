import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { Clock, HOUR_MS } from '../clock.js';
import { ConflictError } from '../errors/domain-errors.js';
import type { Transaction } from '../../database/database.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/** Expired keys are deleted this often (and once at start), in batches of this many rows. */
const SWEEP_INTERVAL_MS = HOUR_MS;
const SWEEP_BATCH = 5_000;

export const IDEMPOTENCY_KEY_REUSED =
  'This Idempotency-Key was already used for a different request.';

/** What a create with an `Idempotency-Key` is identified by: the user's key, and what the request asked for. */
export interface IdempotentRequest {
  userId: number;
  key: string;
  /** The route, e.g. `libraries.create`: a key reused on another route is a different request. */
  scope: string;
  /** sha256 of the scope, the request's fields and its file's bytes. */
  fingerprint: string;
}

/** A result recorded earlier for the same key and the same request: answer it again. */
export interface Replay {
  body: unknown;
}

/**
 * Idempotency keys of the photo-carrying creates. `begin` answers the recorded result of an earlier request with the
 * same key and the same content (a retry), refuses the same key with different content (409), or lets the create
 * run; the create then `record`s its result in its own transaction, so a committed resource always has its key
 * and a failed one never does. Two concurrent requests with one key: the second's record fails on the primary key
 * once the first commits (`isDuplicateKey`), its transaction rolls back, and `begin` then finds the first's result.
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.sweepInBackground();
    this.timer = setInterval(() => this.sweepInBackground(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** The request's identity: null without a key (the create then runs as it always did). */
  async identify(
    userId: number,
    key: string | null,
    scope: string,
    fields: object,
    filePath: string | null,
  ): Promise<IdempotentRequest | null> {
    if (key === null) return null;
    const hash = createHash('sha256');
    hash.update(JSON.stringify([scope, canonicalFields(fields)]));
    if (filePath) {
      for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
    }
    return { userId, key, scope, fingerprint: hash.digest('hex') };
  }

  /** The recorded result of this request, null when none (the create runs); 409 when the key served another. */
  async replay(request: IdempotentRequest | null): Promise<Replay | null> {
    if (!request) return null;
    const stored = await this.keys.find(request.userId, request.key, this.expiredBefore());
    if (!stored) return null;
    if (stored.scope !== request.scope || stored.fingerprint !== request.fingerprint) {
      throw new ConflictError(IDEMPOTENCY_KEY_REUSED);
    }
    return { body: stored.body };
  }

  /** Records the create's result inside its transaction (no-op without a key). */
  async record(
    tx: Transaction,
    request: IdempotentRequest | null,
    resourceId: number,
    status: number,
    body: unknown,
  ): Promise<void> {
    if (!request) return;
    await this.keys.insert(
      tx,
      { ...request, resourceId, status, body, createdAt: this.clock.date() },
      this.expiredBefore(),
    );
  }

  /**
   * Runs a create that records its key, and turns "another request with this key committed first" into that
   * request's result (or 409 when it asked for something else).
   */
  async run<T>(request: IdempotentRequest | null, create: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (error) {
      const earlier = await this.replayAfterFailure(request, error);
      if (!earlier) throw error;
      return earlier.body as T;
    }
  }

  /**
   * After a create failed: when it failed because another request with the same key committed first, that
   * request's result (or 409); null for any other failure (the caller rethrows it).
   */
  async replayAfterFailure(
    request: IdempotentRequest | null,
    error: unknown,
  ): Promise<Replay | null> {
    if (!request || !this.keys.isDuplicateKey(error)) return null;
    return this.replay(request);
  }

  /** Deletes expired keys; answers how many. */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.keys.deleteExpired(this.expiredBefore(), SWEEP_BATCH);
      total += deleted;
      if (deleted < SWEEP_BATCH) return total;
    }
  }

  private expiredBefore(): Date {
    return new Date(this.clock.now() - this.config.idempotencyKeyTtlHours * HOUR_MS);
  }

  /** One sweep at a time; a failure (the database away) is logged and the next interval tries again. */
  private sweepInBackground(): void {
    if (this.running) return;
    this.running = this.sweep()
      .then((deleted) => {
        if (deleted) this.logger.log(`deleted ${deleted} expired idempotency key(s)`);
      })
      .catch((error: unknown) => {
        this.logger.warn(`idempotency key sweep failed: ${(error as Error).message}`);
      })
      .finally(() => {
        this.running = null;
      });
  }
}

/** The fields as sorted [name, value] pairs, without the absent ones: the same form in any order, any boundary. */
function canonicalFields(fields: object): [string, unknown][] {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
