import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { AuthUser } from '../../common/auth/auth-user.js';
import { OPTIONAL_AUTH_KEY } from '../../common/auth/auth.decorators.js';
import { IS_PUBLIC_KEY } from '../../common/auth/public.decorator.js';
import { ApiError } from '../../common/errors/api-error.js';
import { JwtStrategy } from '../jwt.strategy.js';

/**
 * Global guard (after the rate limit): every route needs a valid access token unless it is `@Public()`.
 * `@OptionalAuth()` routes read a token when one is sent; a missing, bad or expired one leaves the caller
 * anonymous (`request.user` undefined). Otherwise 401 `Unauthorized`.
 */
@Injectable()
export class JwtAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly strategy: JwtStrategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    const optional =
      this.reflector.getAllAndOverride<boolean | undefined>(OPTIONAL_AUTH_KEY, targets) === true;
    const isPublic =
      this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC_KEY, targets) === true;
    if (isPublic && !optional) return true;

    const http = context.switchToHttp();
    const request = http.getRequest<Request & { user?: AuthUser }>();
    if (optional && !request.headers.authorization) return true;
    // Already authenticated by the rate limit's staff check (see JwtStaffRequestIdentity).
    if (request.user) return true;
    const user = await this.strategy.authenticateRequest(request, http.getResponse<Response>());
    if (user) {
      request.user = user;
      return true;
    }
    if (optional) return true;
    throw ApiError.unauthorized();
  }
}
