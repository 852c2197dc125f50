import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../common/errors/api-error.js';
import { isSameOrigin, readCookie, SIGN_IN_CSRF_COOKIE, tokensMatch } from './console-http.js';
import { CSRF_MESSAGE } from './console-session.guard.js';

/** The sign-in form's double-submit check: the hidden `_csrf` field must equal its cookie, from this origin. */
@Injectable()
export class SignInCsrfGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!isSameOrigin(req) || !tokensMatch(readCookie(req, SIGN_IN_CSRF_COOKIE), body._csrf)) {
      throw ApiError.forbidden(CSRF_MESSAGE);
    }
    return true;
  }
}
