import { HttpException, HttpStatus } from '@nestjs/common';
import type { ErrorDetails, FieldProblem } from './domain-errors.js';

export type { ErrorDetails } from './domain-errors.js';

/** An HTTP error whose body is exactly the service's envelope: {message, details}. */
export class ApiError extends HttpException {
  constructor(
    status: number,
    message: string,
    readonly details: ErrorDetails = null,
    /** Response headers the error filter sets along with the envelope (e.g. `Retry-After`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super({ message, details }, status);
  }

  /** 503 with `Retry-After` (header and `details.retry_after`, whole seconds ≥ 1). */
  static unavailable(message: string, retryAfterSeconds: number): ApiError {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      message,
      { retry_after: seconds },
      { 'Retry-After': String(seconds) },
    );
  }

  static badRequest(message: string, details: ErrorDetails = null): ApiError {
    return new ApiError(HttpStatus.BAD_REQUEST, message, details);
  }

  static unauthorized(message = 'Unauthorized'): ApiError {
    return new ApiError(HttpStatus.UNAUTHORIZED, message);
  }

  static forbidden(message: string): ApiError {
    return new ApiError(HttpStatus.FORBIDDEN, message);
  }

  static notFound(): ApiError {
    return new ApiError(HttpStatus.NOT_FOUND, 'Not found.');
  }

  static conflict(message: string, details: ErrorDetails = null): ApiError {
    return new ApiError(HttpStatus.CONFLICT, message, details);
  }
}

export type ValidationErrorItem = FieldProblem;

export const VALIDATION_MESSAGE = 'Validation error.';

/** 422 with the field errors, as decisions.md §1 shapes them. */
export class RequestValidationError extends ApiError {
  constructor(readonly errors: ValidationErrorItem[]) {
    super(HttpStatus.UNPROCESSABLE_ENTITY, VALIDATION_MESSAGE, { errors });
  }

  static single(
    loc: (string | number)[],
    msg: string,
    type = 'value_error',
  ): RequestValidationError {
    return new RequestValidationError([{ loc, msg, type }]);
  }
}
