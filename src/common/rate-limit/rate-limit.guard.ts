import { Injectable, type ExecutionContext } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { STAFF_ONLY_KEY } from '../auth/auth.decorators.js';
import { AppConfig, type RateLimitTier } from '../../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { RATE_LIMIT_KEY, type RateLimitSpec } from './rate-limit.decorator.js';

/** The 429 message of each tier (api-spec "Rate limits"); a new tier is one row here plus its limit in AppConfig. */
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
  password_reset: 'Too many password reset attempts. Please try again later.',
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

/** Set on a request the guard counts against the staff tier: the staff member's user id. */
const STAFF_USER = Symbol('rate-limit-staff-user');

/** The tier a request counts against: `staff` for a staff member on a staff endpoint, else the route's. */
function tierOf(reflector: Reflector, context: ExecutionContext): RateLimitTier {
  const request = context.switchToHttp().getRequest<{ [STAFF_USER]?: number }>();
  return typeof request[STAFF_USER] === 'number' ? 'staff' : tieredSpecOf(reflector, context).tier;
}

/** The spec of a route the guard has already checked (canActivate refuses routes without one). */
function tieredSpecOf(reflector: Reflector, context: ExecutionContext): RateLimitSpec {
  return rateLimitSpecOf(reflector, context) as RateLimitSpec;
}

/**
 * @nestjs/throttler's options: one throttler whose limit is the route's tier limit, over the configured window, with
 * `blockDuration: 0` (a pure sliding window: a refused request is neither counted nor penalised).
 */
export function throttlerOptions(
  config: AppConfig,
  reflector: Reflector,
  storage: ThrottlerStorage,
): ThrottlerModuleOptions {
  return {
    storage,
    setHeaders: false,
    throttlers: [
      {
        name: 'tier',
        ttl: config.rateLimit.windowSeconds * 1000,
        limit: (context) => config.rateLimit.limits[tierOf(reflector, context)],
        blockDuration: 0,
      },
    ],
  };
}

/**
 * Global guard, registered ahead of authentication so an over-limit request is refused before anything else:
 * @nestjs/throttler's guard with the service's keys, client address and 429 envelope. One counter per endpoint (or
 * named bucket) and client IP; the tier sets the limit. The one exception (issue 18): a request authenticated as staff
 on a `@StaffOnly()` endpoint counts per endpoint and user against the `staff` tier.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private staffIdentity: StaffRequestIdentity | null = null;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly config: AppConfig,
    private readonly moduleRef: ModuleRef,
  ) {
    super(options, storage, reflector);
  }

  override async onModuleInit(): Promise<void> {
    await super.onModuleInit();
    try {
      this.staffIdentity = this.moduleRef.get(StaffRequestIdentity, { strict: false });
    } catch {
      this.staffIdentity = null; // an app without authentication (test probes): IP tiers only
    }
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const spec = rateLimitSpecOf(this.reflector, context);
    if (spec === undefined) {
      throw new Error(
        `${context.getClass().name}.${context.getHandler().name} has no @RateLimit tier`,
      );
    }
    if (spec === 'none' || !this.config.rateLimit.enabled) return true;
    await this.markStaff(context);
    return super.canActivate(context);
  }

  /** On a staff endpoint, a caller authenticated as staff is counted by user id (see StaffRequestIdentity). */
  private async markStaff(context: ExecutionContext): Promise<void> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request & { [STAFF_USER]?: number }>();
    const staffOnly = this.reflector.getAllAndOverride<boolean | undefined>(STAFF_ONLY_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (staffOnly !== true || !this.staffIdentity || !request.headers.authorization) return;
    const userId = await this.staffIdentity.staffUserId(request, http.getResponse<Response>());
    if (userId !== null) request[STAFF_USER] = userId;
  }

  protected override getTracker(req: Record<string | symbol, unknown>): Promise<string> {
    const staffUser = req[STAFF_USER];
    if (typeof staffUser === 'number') return Promise.resolve(`staff:${staffUser}`);
    return Promise.resolve(clientIp(req as unknown as Request));
  }

  /** Readable keys (`bucket:ip`, `bucket:staff:<user id>`), the same in memory and in Redis. */
  protected override generateKey(context: ExecutionContext, tracker: string): string {
    const spec = tieredSpecOf(this.reflector, context);
    return `${spec.bucket ?? `${context.getClass().name}.${context.getHandler().name}`}:${tracker}`;
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw new ApiError(429, RATE_LIMIT_MESSAGES[tierOf(this.reflector, context)], {
      retry_after: detail.timeToBlockExpire,
    });
  }
}
