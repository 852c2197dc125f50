/**
 * The errors services raise. They name what went wrong in the domain's terms (not found, conflict, refused…) and
 * carry the message and details of the contract; the one error filter (`all-exceptions.filter.ts`) maps each kind
 * to its HTTP status. Nothing here imports Nest or the HTTP layer, so services and `domain/` code can throw them
 * without choosing a status; `ApiError` (an HttpException with a status) stays in controllers, guards, pipes and
 * interceptors.
 */

export type ErrorDetails = Record<string, unknown> | null;

/** One field problem, as decisions.md §1 shapes 422 bodies: `loc[0]` is `query`, `path`, `form`, `file` or `body`. */
export interface FieldProblem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export abstract class DomainError extends Error {
  constructor(
    message: string,
    readonly details: ErrorDetails = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The thing asked for does not exist or is not visible to the caller (404). */
export class NotFoundError extends DomainError {
  constructor(message = 'Not found.', details: ErrorDetails = null) {
    super(message, details);
  }
}

/** The request is understood but a rule of the domain refuses it (400), e.g. "Provide at least one field". */
export class RefusedError extends DomainError {}

/** The request contradicts the current state of the data (409), e.g. a device token held by someone else. */
export class ConflictError extends DomainError {}

/** Field-level problems found by a service (422 `Validation error.` with `details.errors`). */
export class InvalidFieldsError extends DomainError {
  constructor(readonly problems: FieldProblem[]) {
    super('Validation error.', { errors: problems });
  }

  static single(loc: (string | number)[], msg: string, type = 'value_error'): InvalidFieldsError {
    return new InvalidFieldsError([{ loc, msg, type }]);
  }
}

/** The caller is not who they claim to be, or no longer may sign in (401). */
export class UnauthorizedError extends DomainError {
  constructor(message = 'Unauthorized', details: ErrorDetails = null) {
    super(message, details);
  }
}

/** The caller asked too often for something a service limits itself (429), e.g. password-reset mails per address. */
export class TooManyRequestsError extends DomainError {}

/** The caller is known but may not do this (403). */
export class ForbiddenError extends DomainError {}

/** The work cannot be done now; the caller may repeat it after `retryAfterSeconds` (503 with `Retry-After`). */
export class UnavailableError extends DomainError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(message, { retry_after: seconds });
    this.retryAfterSeconds = seconds;
  }
}
