import {
  Injectable,
  StreamableFile,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';

/** A response body already encoded, with its media type (binary formats, or JSON under another media type). */
export class EncodedBody {
  constructor(
    readonly bytes: Buffer,
    readonly contentType: string,
  ) {}

  static json(value: unknown, contentType = 'application/json; charset=utf-8'): EncodedBody {
    return new EncodedBody(Buffer.from(JSON.stringify(value)), contentType);
  }
}

/** A strong validator of the exact bytes sent. */
export function etagOf(bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"`;
}

/** RFC 9110 §13.1.2: `If-None-Match` (weak comparison, `*`, lists) against the representation's ETag. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((candidate) => opaque(candidate) === opaque(etag));
}

/**
 * Conditional GET for a route: the handler's result (an EncodedBody, or a value sent as JSON) gets an ETag of its
 * bytes, and a request whose If-None-Match holds it is answered 304 without a body. A null result is 204.
 */
@Injectable()
export class ConditionalGetInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    return next.handle().pipe(
      map((value: unknown) => {
        if (value === null || value === undefined) {
          response.status(204);
          return undefined;
        }
        const body = value instanceof EncodedBody ? value : EncodedBody.json(value);
        const etag = etagOf(body.bytes);
        response.setHeader('ETag', etag);
        if (noneMatch(request.headers['if-none-match'], etag)) {
          response.status(304);
          return undefined;
        }
        response.setHeader('Content-Type', body.contentType);
        return new StreamableFile(body.bytes, {
          type: body.contentType,
          length: body.bytes.length,
        });
      }),
    );
  }
}

export const ConditionalGet = () => UseInterceptors(ConditionalGetInterceptor);
