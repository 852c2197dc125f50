import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { AuthUser } from './auth-user.js';

export const OPTIONAL_AUTH_KEY = 'bookcase:optional-auth';
export const STAFF_ONLY_KEY = 'bookcase:staff-only';

/**
 * Public route that still reads a token when one is sent (library reads: is_favourited, owner visibility).
 * A missing, bad or expired token makes the caller anonymous, never a 401.
 */
export const OptionalAuth = () => SetMetadata(OPTIONAL_AUTH_KEY, true);

/** Staff only: 401 without a valid token, 403 `Staff access required.` for other users. */
export const StaffOnly = () => SetMetadata(STAFF_ONLY_KEY, true);

/** The authenticated caller (`AuthUser`), or null on public/optional routes without a valid token. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthUser | null => {
    const request = context.switchToHttp().getRequest<{ user?: AuthUser }>();
    return request.user ?? null;
  },
);
