import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request } from 'express';
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
  map: 'Too many requests. Please try again later.',
  export: 'Too many requests. Please try again later.',
};

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
        limit: (context) => config.rateLimit.limits[tieredSpecOf(reflector, context).tier],
        blockDuration: 0,
      },
    ],
  };
}

/**
 * Global guard, registered ahead of authentication so an over-limit request is refused before anything else:
 * @nestjs/throttler's guard with the service's keys, client address and 429 envelope. One counter per endpoint (or
 * named bucket) and client IP; the tier sets the limit.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly config: AppConfig,
  ) {
    super(options, storage, reflector);
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
    return super.canActivate(context);
  }

  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    return Promise.resolve(clientIp(req as unknown as Request));
  }

  /** Readable keys (`bucket:ip`), the same in memory and in Redis, instead of throttler's hashes. */
  protected override generateKey(context: ExecutionContext, tracker: string): string {
    const spec = tieredSpecOf(this.reflector, context);
    return `${spec.bucket ?? `${context.getClass().name}.${context.getHandler().name}`}:${tracker}`;
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const { tier } = tieredSpecOf(this.reflector, context);
    throw new ApiError(429, RATE_LIMIT_MESSAGES[tier], { retry_after: detail.timeToBlockExpire });
  }
}
