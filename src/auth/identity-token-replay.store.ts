import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Clock } from '../common/clock.js';
import type { RedisBreaker } from '../common/redis/redis-breaker.js';
import { UsedIdentityTokenEntity } from './used-identity-token.entity.js';

/**
 * Remembers social identity tokens already used to sign in, until they expire. `claim` is atomic: of two
 * concurrent claims of one key, exactly one wins.
 */
export abstract class IdentityTokenReplayStore {
  /** True when the key was not used before (and is now), false for a replay. */
  abstract claim(key: string, expiresAtMs: number): Promise<boolean>;
}

/**
 * Shared by every instance through Redis: `SET key NX PX ttl`. While Redis fails or is slow, claims go to the
 * database table instead (the breaker's fallback), so a sign-in never depends on Redis.
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

  claim(key: string, expiresAtMs: number): Promise<boolean> {
    const ttlMs = Math.max(1000, Math.ceil(expiresAtMs - this.clock.now()));
    return this.breaker.run(
      async (redis) => (await redis.set(`${this.prefix}${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK',
      () => this.database.claim(key, expiresAtMs),
    );
  }
}

/** Without Redis: a table in the database, so instances and restarts still agree. */
@Injectable()
export class DatabaseIdentityTokenReplayStore extends IdentityTokenReplayStore {
  constructor(
    @InjectRepository(UsedIdentityTokenEntity)
    private readonly used: Repository<UsedIdentityTokenEntity>,
    private readonly clock: Clock,
  ) {
    super();
  }

  async claim(key: string, expiresAtMs: number): Promise<boolean> {
    const now = this.clock.date();
    await this.used.createQueryBuilder().delete().where('expires_at <= :now', { now }).execute();
    const rows = await this.used.manager.query<unknown[]>(
      `INSERT INTO used_identity_tokens (key, expires_at) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at
         WHERE used_identity_tokens.expires_at <= $3
       RETURNING key`,
      [key, new Date(Math.max(expiresAtMs, now.getTime() + 1000)), now],
    );
    return rows.length > 0;
  }
}
