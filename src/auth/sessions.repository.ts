import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { EntityManager, IsNull, Not, Repository } from 'typeorm';
import { PreparedReader } from '../database/prepared-reader.js';
import { RefreshSessionEntity } from './refresh-session.entity.js';

/** The user behind a live session, as the guard needs it. */
export interface SessionUser {
  id: number;
  username: string;
  isStaff: boolean;
  sessionExpiresAt: Date;
}

@Injectable()
export class SessionsRepository {
  constructor(
    @InjectRepository(RefreshSessionEntity)
    private readonly sessions: Repository<RefreshSessionEntity>,
    private readonly reader: PreparedReader,
  ) {}

  async open(userId: number, now: Date, expiresAt: Date): Promise<RefreshSessionEntity> {
    return this.sessions.save(
      this.sessions.create({
        id: randomUUID(),
        userId,
        createdAt: now,
        lastUsedAt: now,
        expiresAt,
        revokedAt: null,
      }),
    );
  }

  /**
   * The active user of a session that is neither revoked nor expired and belongs to `userId`; null otherwise
   * (also when the user was deleted or deactivated).
   */
  async findLiveSessionUser(
    sessionId: string,
    userId: number,
    now: Date,
  ): Promise<SessionUser | null> {
    // Plain SQL: this runs on every authenticated request, and building it with the query builder each time was
    // 6 % of Node's time on the favourites page (issue 7's benchmark). Prepared: planning the join was about half
    // of its PostgreSQL CPU (0.09 → 0.05 ms per request at 1M libraries, issue 22).
    const [row] = await this.reader.read<{
      id: number;
      username: string;
      is_staff: boolean;
      expires_at: Date;
    }>(
      `SELECT u.id, u.username, u.is_staff, s.expires_at
       FROM refresh_sessions s JOIN users u ON u.id = s.user_id
       WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3 AND u.is_active`,
      [sessionId, userId, now],
    );
    if (!row) return null;
    return {
      id: row.id,
      username: row.username,
      isStaff: row.is_staff,
      sessionExpiresAt: new Date(row.expires_at),
    };
  }

  async touch(sessionId: string, now: Date): Promise<void> {
    await this.sessions.update({ id: sessionId }, { lastUsedAt: now });
  }

  /** Revokes every live session of the user except `keepSessionId`. */
  async revokeOthers(
    userId: number,
    keepSessionId: string,
    now: Date,
    manager?: EntityManager,
  ): Promise<number> {
    const repo = manager ? manager.getRepository(RefreshSessionEntity) : this.sessions;
    const result = await repo.update(
      { userId, id: Not(keepSessionId), revokedAt: IsNull() },
      { revokedAt: now },
    );
    return result.affected ?? 0;
  }
}
