import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
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

/**
 * Global guard, registered ahead of authentication so an over-limit request is refused before anything else.
 * One counter per endpoint (or named bucket) and client IP; the tier sets the limit.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
    private readonly storage: RateLimitStorage,
  ) {}

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
    const request = context.switchToHttp().getRequest<Request>();
    const result = await this.storage.hit(
      `${bucket}:${clientIp(request)}`,
      this.config.rateLimit.windowSeconds * 1000,
      this.config.rateLimit.limits[spec.tier],
    );
    if (result.isBlocked) {
      throw new ApiError(429, RATE_LIMIT_MESSAGES[spec.tier], {
        retry_after: result.retryAfterSeconds,
      });
    }
    return true;
  }
}
