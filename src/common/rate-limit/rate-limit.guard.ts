import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { STAFF_ONLY_KEY } from '../auth/auth.decorators.js';
import { AppConfig, type RateLimitTier } from '../../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { RATE_LIMIT_KEY, type RateLimitSpec } from './rate-limit.decorator.js';
import { RateLimitStorage } from './sliding-window.storage.js';

export const RATE_LIMIT_MESSAGES: Record<RateLimitTier, string> = {
  read: 'Too many requests. Please try again later.',
  write: 'Too many requests. Please try again later.',
  login: 'Too many login attempts. Please try again later.',
  register: 'Too many registration attempts. Please try again later.',
  refresh: 'Too many refresh attempts. Please try again later.',
  social: 'Too many social login attempts. Please try again later.',
  staff: 'Too many requests. Please try again later.',
  map: 'Too many requests. Please try again later.',
  export: 'Too many requests. Please try again later.',
};

/**
 * Who a request on a staff endpoint is authenticated as, when that is a staff member (the auth module provides it;
 * it may attach the user to the request so authentication is not repeated). Null for anyone else.
 */
export abstract class StaffRequestIdentity {
  abstract staffUserId(request: Request, response: Response): Promise<number | null>;
}

/**
 * The client is the socket's peer address; Express's `trust proxy` (set from TRUST_PROXY) decides whether
 * X-Forwarded-For may name another. `::ffff:1.2.3.4` and `1.2.3.4` are one client.
 */
export function clientIp(req: Pick<Request, 'ip' | 'socket'>): string {
  const ip = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

export function rateLimitSpecOf(
  reflector: Reflector,
  context: ExecutionContext,
): RateLimitSpec | 'none' | undefined {
  return reflector.getAllAndOverride<RateLimitSpec | 'none' | undefined>(RATE_LIMIT_KEY, [
    context.getHandler(),
    context.getClass(),
  ]);
}

/**
 * Global guard, registered ahead of authentication so an over-limit request is refused before anything else.
 * One counter per endpoint (or named bucket) and client IP; the tier sets the limit. The one exception: a request
 * authenticated as staff on a `@StaffOnly()` endpoint counts per endpoint and user against the `staff` tier.
 */
@Injectable()
export class RateLimitGuard implements CanActivate, OnModuleInit {
  private staffIdentity: StaffRequestIdentity | null = null;

  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
    private readonly storage: RateLimitStorage,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    try {
      this.staffIdentity = this.moduleRef.get(StaffRequestIdentity, { strict: false });
    } catch {
      this.staffIdentity = null; // an app without authentication (test probes): IP tiers only
    }
  }

  /** The counter and tier of a request: the staff tier per user, or the route's tier per client IP. */
  private async keyOf(
    context: ExecutionContext,
    bucket: string,
    tier: RateLimitTier,
  ): Promise<{ key: string; tier: RateLimitTier }> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const staffOnly = this.reflector.getAllAndOverride<boolean | undefined>(STAFF_ONLY_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (staffOnly === true && this.staffIdentity && request.headers.authorization) {
      const userId = await this.staffIdentity.staffUserId(request, http.getResponse<Response>());
      if (userId !== null) return { key: `${bucket}:staff:${userId}`, tier: 'staff' };
    }
    return { key: `${bucket}:${clientIp(request)}`, tier };
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const spec = rateLimitSpecOf(this.reflector, context);
    if (spec === undefined) {
      throw new Error(
        `${context.getClass().name}.${context.getHandler().name} has no @RateLimit tier`,
      );
    }
    if (spec === 'none' || !this.config.rateLimit.enabled) return true;
    const bucket = spec.bucket ?? `${context.getClass().name}.${context.getHandler().name}`;
    const { key, tier } = await this.keyOf(context, bucket, spec.tier);
    const result = await this.storage.hit(
      key,
      this.config.rateLimit.windowSeconds * 1000,
      this.config.rateLimit.limits[tier],
    );
    if (result.isBlocked) {
      throw new ApiError(429, RATE_LIMIT_MESSAGES[tier], {
        retry_after: result.retryAfterSeconds,
      });
    }
    return true;
  }
}
