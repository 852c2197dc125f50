import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthUser } from '../../common/auth/auth-user.js';
import { STAFF_ONLY_KEY } from '../../common/auth/auth.decorators.js';
import { ApiError } from '../../common/errors/api-error.js';

export const STAFF_REQUIRED_MESSAGE = 'Staff access required.';

/** Global guard (after the JWT guard): `@StaffOnly()` routes answer 401 without a user, 403 for non-staff. */
@Injectable()
export class StaffGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const staffOnly = this.reflector.getAllAndOverride<boolean | undefined>(STAFF_ONLY_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (staffOnly !== true) return true;
    const user = context.switchToHttp().getRequest<{ user?: AuthUser }>().user;
    if (!user) throw ApiError.unauthorized();
    if (!user.isStaff) throw ApiError.forbidden(STAFF_REQUIRED_MESSAGE);
    return true;
  }
}
