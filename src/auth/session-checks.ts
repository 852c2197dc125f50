import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { SessionsRepository, type SessionUser } from './sessions.repository.js';

interface Waiting {
  sessionId: string;
  userId: number;
  resolve(user: SessionUser | null): void;
  reject(error: unknown): void;
}

/** At most this many checks share one statement; more start the next statement at once. */
const MAX_BATCH = 100;

/**
 * The per-request session check (the session live, the user active), with the checks of requests that arrive
 * together sharing one statement. A check waits until the end of the event loop's current turn (`setImmediate`),
 * when every request read in the same turn has asked for its own, and then one statement reads them all
 * (SessionsRepository.findLiveSessionUsers). Nothing is remembered: the statement is sent after every request of
 * its batch arrived, so each request is answered from a snapshot taken after it arrived, exactly as with a
 * statement of its own, and a revocation committed before a request arrives refuses that request (on every
 * instance, whatever changed the row: the API, the console, the command line or SQL). Under load several requests
 * arrive per turn and share a statement; alone, a request waits one turn (microseconds).
 */
@Injectable()
export class SessionChecks {
  private waiting: Waiting[] = [];
  /** Statements sent and checks answered (tests and the bench read the ratio). */
  statements = 0;
  checks = 0;

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
  ) {}

  /** The active user of the session when it is live and belongs to `userId`, else null. */
  liveSessionUser(sessionId: string, userId: number): Promise<SessionUser | null> {
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => this.flush());
      this.waiting.push({ sessionId, userId, resolve, reject });
      if (this.waiting.length >= MAX_BATCH) this.flush();
    });
  }

  private flush(): void {
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    this.statements += 1;
    this.checks += batch.length;
    const ids = [...new Set(batch.map((check) => check.sessionId))];
    this.sessions.findLiveSessionUsers(ids, this.clock.date()).then(
      (users) => {
        for (const check of batch) {
          const user = users.get(check.sessionId);
          check.resolve(
            user && user.userId === check.userId
              ? {
                  id: user.id,
                  username: user.username,
                  isStaff: user.isStaff,
                  sessionExpiresAt: user.sessionExpiresAt,
                }
              : null,
          );
        }
      },
      (error: unknown) => {
        for (const check of batch) check.reject(error);
      },
    );
  }
}
