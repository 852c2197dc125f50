import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { STAFF_REQUIRED_MESSAGE } from '../auth/guards/staff.guard.js';
import { ApiError } from '../common/errors/api-error.js';
import { isSameOrigin, readCookie, SESSION_COOKIE, tokensMatch } from './console-http.js';
import type { ConsoleRequest } from './console-pages.js';
import { ConsoleSessionService } from './console-session.service.js';

export const CSRF_MESSAGE =
  'This form has expired or did not come from this console. Reload the page and try again.';

/** Thrown for a console request without a live session: pages redirect to the sign-in form. */
export class ConsoleSignInRequired extends ApiError {
  constructor() {
    super(401, 'Please sign in to continue.');
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * Every console page but sign-in: a live cookie session of a staff member. Forms (every other method) must come
 * from this origin and carry the session's CSRF token in `_csrf`.
 */
@Injectable()
export class ConsoleSessionGuard implements CanActivate {
  constructor(private readonly sessions: ConsoleSessionService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ConsoleRequest>();
    const user = await this.sessions.resolve(readCookie(req, SESSION_COOKIE));
    if (!user) throw new ConsoleSignInRequired();
    if (!user.isStaff) throw ApiError.forbidden(STAFF_REQUIRED_MESSAGE);
    if (!SAFE_METHODS.has(req.method)) {
      const body = (req.body ?? {}) as Record<string, unknown>;
      // A multipart form (a photo upload) is parsed after the guards run: its token travels in the form's action.
      const multipart = (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/');
      const token = multipart ? req.query._csrf : body._csrf;
      if (!isSameOrigin(req) || !tokensMatch(user.csrfToken, token)) {
        throw ApiError.forbidden(CSRF_MESSAGE);
      }
    }
    req.consoleUser = user;
    return true;
  }
}
