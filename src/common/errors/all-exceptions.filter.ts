import {
  ArgumentsHost,
  Catch,
  HttpException,
  HttpStatus,
  Logger,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  isDatabaseUnavailable,
} from '../../database/database-unavailable.js';
import { sqlErrorOf } from '../../database/sql-error.js';
import { INVALID_PHOTO_MESSAGE, InvalidPhotoError } from '../media/photo-processor.js';
import { ApiError, type ErrorDetails } from './api-error.js';
import {
  ConflictError,
  TooManyRequestsError,
  DomainError,
  ForbiddenError,
  InvalidFieldsError,
  NotFoundError,
  RefusedError,
  UnauthorizedError,
  UnavailableError,
} from './domain-errors.js';

export interface ErrorBody {
  message: string;
  details: ErrorDetails;
}

const GENERIC_MESSAGES: Record<number, string> = {
  400: 'Bad request.',
  401: 'Unauthorized',
  403: 'Forbidden.',
  404: 'Not found.',
  405: 'Method not allowed.',
  406: 'Not acceptable.',
  409: 'Conflict.',
  413: 'Request body too large.',
  415: 'Unsupported media type.',
  422: 'Validation error.',
  429: 'Too many requests. Please try again later.',
  500: 'Internal server error.',
  503: 'Service unavailable.',
};

/** A database that is down, restarting or too slow: the request may be repeated later. */
export const SERVICE_UNAVAILABLE: ErrorBody = {
  message: 'Service temporarily unavailable.',
  details: { retry_after: DATABASE_RETRY_AFTER_SECONDS },
};

/** The status of each kind of domain error (services raise them; only this filter knows HTTP). */
const DOMAIN_STATUS: readonly (readonly [
  abstract new (...args: never[]) => DomainError,
  number,
])[] = [
  [NotFoundError, HttpStatus.NOT_FOUND],
  [RefusedError, HttpStatus.BAD_REQUEST],
  [ConflictError, HttpStatus.CONFLICT],
  [TooManyRequestsError, HttpStatus.TOO_MANY_REQUESTS],
  [InvalidFieldsError, HttpStatus.UNPROCESSABLE_ENTITY],
  [UnauthorizedError, HttpStatus.UNAUTHORIZED],
  [ForbiddenError, HttpStatus.FORBIDDEN],
  [UnavailableError, HttpStatus.SERVICE_UNAVAILABLE],
];

/** PostgreSQL error codes the service maps instead of leaking driver text. */
const PG_CONFLICT = new Set(['23505', '23P01', '40001', '40P01']);
const PG_REFERENCE = new Set(['23503']);
const PG_BAD_INPUT = new Set(['22P02', '22003', '22001', '22007', '22008', '23502', '23514']);

/** Body-parser / multer failures carry a `type` or `code` instead of being HttpExceptions. */
interface TransportError {
  type?: string;
  code?: string;
  status?: number;
  statusCode?: number;
}

/** The single place that turns any thrown value into {message, details}. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    const [status, body] = this.toEnvelope(exception, request);
    if (response.headersSent) {
      response.end();
      return;
    }
    this.setHeaders(response, status, body, exception);
    response.status(status).json(body);
  }

  /** Cache-Control on every error; an ApiError's own headers; Retry-After on a 503 that names one. */
  protected setHeaders(
    response: Response,
    status: number,
    body: ErrorBody,
    exception: unknown,
  ): void {
    response.setHeader('Cache-Control', 'private, no-store');
    if (exception instanceof ApiError) {
      for (const [name, value] of Object.entries(exception.headers))
        response.setHeader(name, value);
    }
    if (exception instanceof UnavailableError) {
      response.setHeader('Retry-After', String(exception.retryAfterSeconds));
    }
    const retryAfter = (body.details as { retry_after?: unknown } | null)?.retry_after;
    if (status === 503 && typeof retryAfter === 'number' && !response.hasHeader('Retry-After')) {
      response.setHeader('Retry-After', String(retryAfter));
    }
  }

  protected toEnvelope(exception: unknown, request: Request): [number, ErrorBody] {
    if (exception instanceof ApiError) {
      return [exception.getStatus(), { message: exception.message, details: exception.details }];
    }
    // The photo store's media error: anything that is not a usable image.
    if (exception instanceof InvalidPhotoError)
      return [400, { message: INVALID_PHOTO_MESSAGE, details: null }];
    if (exception instanceof DomainError) {
      const status = DOMAIN_STATUS.find(([kind]) => exception instanceof kind)?.[1];
      if (status !== undefined) {
        return [status, { message: exception.message, details: exception.details }];
      }
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status >= 500) this.logUnexpected(exception, request);
      return [status, { message: this.messageFor(exception, status), details: null }];
    }
    const failure = sqlErrorOf(exception);
    if (failure) {
      const { code } = failure;
      if (PG_CONFLICT.has(code))
        return [409, { message: 'The request conflicts with existing data.', details: null }];
      if (PG_REFERENCE.has(code))
        return [409, { message: 'A referenced object does not exist.', details: null }];
      if (PG_BAD_INPUT.has(code)) return [400, { message: 'Bad request.', details: null }];
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(
        `${request.method} ${request.path}: database unavailable (${(exception as Error).message})`,
      );
      return [503, SERVICE_UNAVAILABLE];
    }
    const transport = (exception ?? {}) as TransportError;
    if (transport.type === 'entity.parse.failed')
      return [400, { message: 'Cannot parse request body.', details: null }];
    if (transport.type === 'entity.too.large')
      return [413, { message: 'Request body too large.', details: null }];
    if (transport.type === 'encoding.unsupported' || transport.type === 'charset.unsupported') {
      return [415, { message: 'Unsupported media type.', details: null }];
    }
    const transportStatus = transport.status ?? transport.statusCode;
    if (typeof transportStatus === 'number' && transportStatus >= 400 && transportStatus < 500) {
      return [
        transportStatus,
        { message: GENERIC_MESSAGES[transportStatus] ?? 'Bad request.', details: null },
      ];
    }
    this.logUnexpected(exception, request);
    return [HttpStatus.INTERNAL_SERVER_ERROR, { message: GENERIC_MESSAGES[500], details: null }];
  }

  /** Nest's own exceptions (unknown route, body parser wrapped errors) keep the service's fixed wording. */
  private messageFor(exception: HttpException, status: number): string {
    const response = exception.getResponse();
    const cause = (exception.cause ?? {}) as TransportError;
    if (cause.type === 'entity.parse.failed') return 'Cannot parse request body.';
    if (
      status === 400 &&
      typeof response === 'object' &&
      /JSON/i.test(String((response as { message?: unknown }).message))
    ) {
      return 'Cannot parse request body.';
    }
    return GENERIC_MESSAGES[status] ?? (status >= 500 ? GENERIC_MESSAGES[500] : 'Bad request.');
  }

  private logUnexpected(exception: unknown, request: Request): void {
    const error = exception instanceof Error ? exception : new Error(String(exception));
    this.logger.error(`${request.method} ${request.path} failed: ${error.message}`, error.stack);
  }
}
