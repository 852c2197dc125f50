import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { isUtf8 } from 'node:buffer';
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { ApiError, RequestValidationError } from '../errors/api-error.js';
import {
  badEncodedComponent,
  badEncodedPairs,
  inspectBody,
  jsonNestingExceeds,
} from './input-text.js';

const CANNOT_PARSE = 'Cannot parse request body.';

export const BODY_LIMIT = '1mb';

type WithBodyError = Request & {
  bodyParseError?: unknown;
  /** The raw body was not UTF-8: the parser put U+FFFD where the bad bytes were. */
  bodyNotUtf8?: boolean;
};

/**
 * Before parsing: a UTF-8 JSON body nested deeper than MAX_JSON_DEPTH is refused by a byte scan (JSON.parse and
 * the validation after it never see it); a body that is not UTF-8 is marked, so the fields it garbled are
 * reported after parsing. A form body's fields are checked in their percent-encoded form.
 */
function verifyJson(req: Request, _res: Response, bytes: Buffer, encoding: string): void {
  if (encoding !== 'utf-8' && encoding !== 'utf8') return;
  if (jsonNestingExceeds(bytes)) throw ApiError.badRequest(CANNOT_PARSE);
  if (!isUtf8(bytes)) (req as WithBodyError).bodyNotUtf8 = true;
}

function verifyForm(_req: Request, _res: Response, bytes: Buffer): void {
  const items = badEncodedPairs(bytes.toString('latin1'), 'body');
  if (items.length) throw new RequestValidationError(items);
}

/** After parsing: NUL bytes and garbled text anywhere in the body; nesting again (bodies the byte scan skipped). */
function inspectParsed(req: WithBodyError): unknown {
  if (!req.body || typeof req.body !== 'object') return undefined;
  const { tooDeep, items } = inspectBody(req.body, 'body', req.bodyNotUtf8 === true);
  if (tooDeep) return ApiError.badRequest(CANNOT_PARSE);
  return items.length ? new RequestValidationError(items) : undefined;
}

/**
 * Paths and query strings, checked before routing decodes them. A path with a NUL or non-UTF-8 bytes names nothing:
 * 404 at once (routing would fail to decode it, or hand the NUL to a query). A query parameter holding them is a
 * 422 under `query`, recorded like a body error and answered by BodyParseErrorGuard after the rate limit counted
 * the request and before anything reads the database.
 */
export function rejectBadRequestTarget(req: Request, res: Response, next: NextFunction): void {
  const target = req.originalUrl ?? req.url;
  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  if (path.includes('\0') || path.split('/').some(badEncodedComponent)) {
    res
      .status(404)
      .setHeader('Cache-Control', 'private, no-store')
      .json({ message: 'Not found.', details: null });
    return;
  }
  if (queryAt >= 0) {
    const items = badEncodedPairs(target.slice(queryAt + 1), 'query');
    if (items.length) (req as WithBodyError).bodyParseError = new RequestValidationError(items);
  }
  next();
}

/**
 * Body parsing (and the byte checks of paths, queries and bodies) runs before routing, so a malformed or oversized body would be refused before the rate limit could
 * count it. These parsers only record the failure; BodyParseErrorGuard, registered right after the rate-limit
 * guard, turns it into the 400/413 once the request has been counted.
 */
export function deferredBodyParsers(): RequestHandler[] {
  const defer =
    (parser: RequestHandler): RequestHandler =>
    (req: Request, res: Response, next: NextFunction) =>
      parser(req, res, (error?: unknown) => {
        const request = req as WithBodyError;
        const problem = error ?? inspectParsed(request);
        // A refused path or query (recorded first) is the answer; the body's problem would be a second one.
        if (problem) {
          request.bodyParseError ??= problem;
          req.body = {};
        }
        next();
      });
  return [
    rejectBadRequestTarget,
    defer(express.json({ limit: BODY_LIMIT, verify: verifyJson })),
    defer(express.urlencoded({ limit: BODY_LIMIT, extended: false, verify: verifyForm })),
  ];
}

@Injectable()
export class BodyParseErrorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const error = context.switchToHttp().getRequest<WithBodyError>().bodyParseError;
    if (error)
      throw error instanceof Error ? error : ApiError.badRequest('Cannot parse request body.');
    return true;
  }
}
