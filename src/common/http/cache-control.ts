import {
  Injectable,
  SetMetadata,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';

export const PUBLIC_CACHE_KEY = 'bookcase:public-cache';
export const SHARED_CACHE_KEY = 'bookcase:shared-cache';
export const MAX_PUBLIC_CACHE_SECONDS = 300;

/** Anonymous GETs of this route may be cached publicly for `seconds` (≤ 300); reads with a token never are. */
export const PublicCache = (seconds: number) =>
  SetMetadata(
    PUBLIC_CACHE_KEY,
    Math.min(MAX_PUBLIC_CACHE_SECONDS, Math.max(0, Math.floor(seconds))),
  );

/**
 * Responses of this route hold no per-caller data whoever asks: browsers revalidate every time (ETag), shared caches
 * (CDN, proxy) keep them `seconds` (≤ 300), also for requests that carry credentials.
 */
export const SharedCache = (seconds: number) =>
  SetMetadata(
    SHARED_CACHE_KEY,
    Math.min(MAX_PUBLIC_CACHE_SECONDS, Math.max(0, Math.floor(seconds))),
  );

/**
 * Cache-Control for every response: anonymous GETs of routes marked @PublicCache get `public, max-age`; everything
 * else (any request carrying credentials, authenticated routes, token endpoints, writes) is `private, no-store`.
 */
@Injectable()
export class CacheControlInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const request = context.switchToHttp().getRequest<Request & { user?: unknown }>();
      const response = context.switchToHttp().getResponse<Response>();
      const maxAge = this.reflector.getAllAndOverride<number | undefined>(PUBLIC_CACHE_KEY, [
        context.getHandler(),
        context.getClass(),
      ]);
      const shared = this.reflector.getAllAndOverride<number | undefined>(SHARED_CACHE_KEY, [
        context.getHandler(),
        context.getClass(),
      ]);
      if (shared !== undefined && (request.method === 'GET' || request.method === 'HEAD')) {
        response.setHeader('Cache-Control', `public, max-age=0, s-maxage=${shared}`);
        return next.handle();
      }
      const personal = Boolean(
        request.headers.authorization || request.headers.cookie || request.user,
      );
      if (personal) {
        response.setHeader('Cache-Control', 'private, no-store');
        response.setHeader('Vary', 'Authorization');
      } else if (request.method === 'GET' && maxAge !== undefined && maxAge > 0) {
        response.setHeader('Cache-Control', `public, max-age=${maxAge}`);
        response.setHeader('Vary', 'Authorization');
      } else {
        response.setHeader('Cache-Control', 'private, no-store');
      }
    }
    return next.handle();
  }
}
