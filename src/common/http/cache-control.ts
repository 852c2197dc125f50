import {
  Injectable,
  SetMetadata,
  StreamableFile,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { hash } from 'node:crypto';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';

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

/** A strong validator of a JSON text (the exact bytes sent). */
export function textEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 32)}"`;
}

/** A strong validator of a JSON body as Express will send it. */
export function jsonEtag(body: unknown): string {
  return textEtag(JSON.stringify(body));
}

/**
 * Cache-Control for every response: routes marked @SharedCache are `public, max-age=0, s-maxage=N` for everyone;
 * anonymous GETs of routes marked @PublicCache get `public, max-age=0, s-maxage=N` (shared caches keep them for N s;
 * clients revalidate every time, so a client that ignores `Vary` never shows an anonymous answer after signing in)
 * with an `ETag`: Express answers a matching `If-None-Match` with 304 (its `req.fresh` check in `res.send`).
 * Everything else (any request carrying credentials, authenticated routes, token endpoints, writes) is
 * `private, no-store`.
 */
@Injectable()
export class CacheControlInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request & { user?: unknown }>();
    const response = context.switchToHttp().getResponse<Response>();
    const targets = [context.getHandler(), context.getClass()];
    const maxAge = this.reflector.getAllAndOverride<number | undefined>(PUBLIC_CACHE_KEY, targets);
    const shared = this.reflector.getAllAndOverride<number | undefined>(SHARED_CACHE_KEY, targets);
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
      response.setHeader('Cache-Control', `public, max-age=0, s-maxage=${maxAge}`);
      response.setHeader('Vary', 'Authorization');
      return next.handle().pipe(
        map((body: unknown) => {
          // Handlers that answer themselves (files with their own validators) keep theirs.
          if (body === undefined || response.headersSent || response.getHeader('ETag')) return body;
          if (
            typeof body !== 'object' ||
            body === null ||
            Buffer.isBuffer(body) ||
            body instanceof StreamableFile
          ) {
            response.setHeader('ETag', jsonEtag(body));
            return body;
          }
          // Serialised once, here: hashing JSON.stringify(body) and then letting res.json stringify it again cost
          // a public list page two serialisations of its 14 KB (issue 22). Express sends the string as it is
          // (and still answers a matching If-None-Match with 304).
          const json = JSON.stringify(body);
          response.setHeader('ETag', textEtag(json));
          response.setHeader('Content-Type', 'application/json; charset=utf-8');
          return json;
        }),
      );
    } else {
      response.setHeader('Cache-Control', 'private, no-store');
    }
    return next.handle();
  }
}
