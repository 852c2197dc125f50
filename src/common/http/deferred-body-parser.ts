import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';

export const BODY_LIMIT = '1mb';

type WithBodyError = Request & { bodyParseError?: { type?: string; status?: number } };

/**
 * Body parsing runs before routing, so a malformed or oversized body would be refused before the rate limit could
 * count it. These parsers only record the failure; BodyParseErrorGuard, registered right after the rate-limit
 * guard, turns it into the 400/413 once the request has been counted.
 */
export function deferredBodyParsers(): RequestHandler[] {
  const defer =
    (parser: RequestHandler): RequestHandler =>
    (req: Request, res: Response, next: NextFunction) =>
      parser(req, res, (error?: unknown) => {
        if (error) {
          (req as WithBodyError).bodyParseError = error as WithBodyError['bodyParseError'];
          req.body = {};
        }
        next();
      });
  return [
    defer(express.json({ limit: BODY_LIMIT })),
    defer(express.urlencoded({ limit: BODY_LIMIT, extended: false })),
  ];
}

@Injectable()
export class BodyParseErrorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const error = context.switchToHttp().getRequest<WithBodyError>().bodyParseError;
    if (error) throw error;
    return true;
  }
}
