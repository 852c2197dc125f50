/**
 * The error bodies suites expect, in one place: every error is `{message, details}` (decisions.md §1), and these
 * are the contract's fixed wordings. A suite's own message goes through `errorBody`.
 */

export interface ErrorBody {
  message: string;
  details: Record<string, unknown> | null;
}

export const errorBody = (message: string, details: ErrorBody['details'] = null): ErrorBody => ({
  message,
  details,
});

export const UNAUTHORIZED = errorBody('Unauthorized');
export const STAFF_REQUIRED = errorBody('Staff access required.');
export const NOT_FOUND = errorBody('Not found.');
export const CANNOT_PARSE = errorBody('Cannot parse request body.');
export const INVALID_REFRESH = errorBody('Invalid or expired refresh token.');
export const INVALID_CREDENTIALS = errorBody('Invalid credentials.');

/** 422 with field errors; `type` is matched only where given. */
export function validationError(
  ...errors: { loc: (string | number)[]; msg?: unknown; type?: string }[]
): ErrorBody {
  return errorBody('Validation error.', {
    errors: errors.map((item) => ({
      loc: item.loc,
      msg: item.msg ?? expect.any(String),
      type: item.type ?? expect.any(String),
    })),
  });
}
