import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AuthUser } from '../common/auth/auth-user.js';
import { StaffRequestIdentity } from '../common/rate-limit/rate-limit.guard.js';
import { JwtStrategy } from './jwt.strategy.js';

/**
 * The rate limit's view of a staff endpoint's caller: the bearer token authenticated once, here (the user is kept on
 * the request, so the JWT guard does not authenticate it again). A staff member is counted per user.
 */
@Injectable()
export class JwtStaffRequestIdentity extends StaffRequestIdentity {
  private readonly logger = new Logger(JwtStaffRequestIdentity.name);

  constructor(private readonly strategy: JwtStrategy) {
    super();
  }

  async staffUserId(request: Request & { user?: AuthUser }, response: Response) {
    try {
      const user = await this.strategy.authenticateRequest(request, response);
      if (!user) return null;
      request.user = user;
      return user.isStaff ? user.id : null;
    } catch (error) {
      // The JWT guard authenticates again and reports the failure as it always does.
      this.logger.warn(`staff rate-limit identity unavailable: ${(error as Error).message}`);
      return null;
    }
  }
}
