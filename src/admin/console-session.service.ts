import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { AUTH_MESSAGES } from '../auth/auth.messages.js';
import { AuthService } from '../auth/auth.service.js';
import { STAFF_REQUIRED_MESSAGE } from '../auth/guards/staff.guard.js';
import { Clock } from '../common/clock.js';
import { ForbiddenError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import { ConsoleSessionRepository } from './console-session.repository.js';

/** The signed-in staff member of a console request. */
export interface ConsoleUser {
  id: number;
  username: string;
  isStaff: boolean;
  csrfToken: string;
}

/** Sessions are refreshed in the database at most this often (idle expiry is counted in minutes). */
const TOUCH_EVERY_MS = 60_000;

const hashToken = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * Staff console sign-in: the same credentials and timing-safe check as the API's login, staff only. The cookie
 * carries a random token; the database keeps its SHA-256, the session's CSRF token and when it was last used.
 */
@Injectable()
export class ConsoleSessionService {
  constructor(
    private readonly auth: AuthService,
    private readonly sessions: ConsoleSessionRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  get idleSeconds(): number {
    return this.config.adminSession.idleSeconds;
  }

  /** A new session token for valid staff credentials; 401 for bad credentials, 403 for accounts without staff. */
  async signIn(identifier: string, password: string): Promise<string> {
    const user = await this.auth.verifyCredentials(identifier, password);
    if (!user) throw new UnauthorizedError(AUTH_MESSAGES.invalidCredentials);
    if (!user.isStaff) throw new ForbiddenError(STAFF_REQUIRED_MESSAGE);
    const now = this.clock.date();
    await this.sessions.endIdle(this.idleSince(now), now);
    const session = await this.auth.openSession(user.id, this.config.adminSession.maxSeconds);
    const token = randomBytes(32).toString('base64url');
    await this.sessions.insert(
      hashToken(token),
      session.id,
      randomBytes(24).toString('base64url'),
      now,
    );
    return token;
  }

  /** The user of a live session, or null (unknown, idle, expired, revoked, or the account deactivated). */
  async resolve(token: string): Promise<ConsoleUser | null> {
    if (!token) return null;
    const now = this.clock.date();
    const hash = hashToken(token);
    const row = await this.sessions.findLive(hash, now, this.idleSince(now));
    if (!row) return null;
    if (now.getTime() - new Date(row.last_seen_at).getTime() >= TOUCH_EVERY_MS) {
      await this.sessions.touch(hash, now);
    }
    return {
      id: row.user_id,
      username: row.username,
      isStaff: row.is_staff,
      csrfToken: row.csrf_token,
    };
  }

  async signOut(token: string): Promise<void> {
    if (token) await this.sessions.end(hashToken(token), this.clock.date());
  }

  private idleSince(now: Date): Date {
    return new Date(now.getTime() - this.idleSeconds * 1000);
  }
}
