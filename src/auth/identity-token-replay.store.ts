import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import type { RedisBreaker } from '../common/redis/redis-breaker.js';
import { Database } from '../database/database.js';

/**
 * Remembers social identity tokens already used to sign in, until they expire. `claim` is atomic: of two
 * concurrent claims of one key, exactly one wins.
 */
export abstract class IdentityTokenReplayStore {
  /** True when the key was not used before (and is now), false for a replay. */
  abstract claim(key: string, expiresAtMs: number): Promise<boolean>;
}

/**
 * The database table is the record of truth; Redis only accelerates. A claim first asks Redis whether the key is
 * known (a replay is then refused without touching the database), then claims in the database (atomic, the only
 * decision that lets a sign-in through), and on success writes the key through to Redis. A key claimed while Redis
 * was down, or in Redis just before an outage, is therefore still known to the database: it can never be replayed
 * because Redis forgot it or cannot answer. Redis failures only skip the shortcut (the breaker's fallback).
 */
export class RedisIdentityTokenReplayStore extends IdentityTokenReplayStore {
  constructor(
    private readonly breaker: RedisBreaker,
    private readonly database: IdentityTokenReplayStore,
    private readonly clock: Clock,
    private readonly prefix: string,
  ) {
    super();
  }

  async claim(key: string, expiresAtMs: number): Promise<boolean> {
    const redisKey = `${this.prefix}${key}`;
    const knownInRedis = await this.breaker.run(
      async (redis) => (await redis.exists(redisKey)) === 1,
      () => false,
    );
    if (knownInRedis) return false;
    const claimed = await this.database.claim(key, expiresAtMs);
    if (claimed) {
      const ttlMs = Math.max(1000, Math.ceil(expiresAtMs - this.clock.now()));
      await this.breaker.run(
        async (redis) => void (await redis.set(redisKey, '1', 'PX', ttlMs)),
        () => undefined,
      );
    }
    return claimed;
  }
}

/**
 * Without Redis: a table in the database (`used_identity_tokens`, each key kept until it expires), so instances and
 * restarts still agree.
 */
@Injectable()
export class DatabaseIdentityTokenReplayStore extends IdentityTokenReplayStore {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {
    super();
  }

  async claim(key: string, expiresAtMs: number): Promise<boolean> {
    const now = this.clock.date();
    await this.db.query('DELETE FROM used_identity_tokens WHERE expires_at <= $1', [now]);
    const rows = await this.db.query<unknown[]>(
      `INSERT INTO used_identity_tokens (key, expires_at) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at
         WHERE used_identity_tokens.expires_at <= $3
       RETURNING key`,
      [key, new Date(Math.max(expiresAtMs, now.getTime() + 1000)), now],
    );
    return rows.length > 0;
  }
}
