import { Catch } from '@nestjs/common';
import type { Response } from 'express';
import { PageExceptionFilter, type ErrorBody } from '../common/errors/all-exceptions.filter.js';
import type { ErrorDetails } from '../common/errors/api-error.js';
import { consoleReturnPath, CONSOLE_ROOT } from './console-http.js';
import { ConsolePages, type ConsoleRequest } from './console-pages.js';
import { ConsoleSignInRequired } from './console-session.guard.js';

/** Field errors (422) and refusal reasons (409 blockers) as lines a person can read. */
export function detailLines(details: ErrorDetails): string[] {
  const errors = (details as { errors?: unknown } | null)?.errors;
  if (Array.isArray(errors)) {
    return errors.map((item) => {
      const { loc, msg } = item as { loc?: unknown[]; msg?: string };
      const field = Array.isArray(loc) ? loc.slice(1).join('.') : '';
      return field ? `${field}: ${msg ?? ''}` : String(msg ?? '');
    });
  }
  if (details && typeof details === 'object') {
    const blockers = (details as { blockers?: { message?: string }[] }).blockers;
    if (Array.isArray(blockers)) return blockers.map((b) => String(b.message ?? ''));
    const retry = (details as { retry_after?: number }).retry_after;
    if (typeof retry === 'number') return [`Try again in ${retry} s.`];
  }
  return [];
}

/**
 * The console's answer to every error: HTML instead of the API's JSON. A request without a session goes to the
 * sign-in form; a refused form post of a signed-in user goes back to its page with the reason; anything else is an
 * error page with the status and message (unknown errors stay a generic 500, logged as in the API).
 */
@Catch()
export class ConsoleExceptionFilter extends PageExceptionFilter<ConsoleRequest> {
  constructor(private readonly pages: ConsolePages) {
    super();
  }

  /** Without a session: to the sign-in form. */
  protected override answered(exception: unknown, req: ConsoleRequest, res: Response): boolean {
    if (!(exception instanceof ConsoleSignInRequired)) return false;
    if (req.method === 'GET') {
      const next = encodeURIComponent(req.originalUrl);
      this.pages.redirect(req, res, `${CONSOLE_ROOT}/login?next=${next}`);
    } else {
      this.pages.redirect(req, res, `${CONSOLE_ROOT}/login`, {
        kind: 'error',
        text: 'Your session has ended. Please sign in again.',
      });
    }
    return true;
  }

  protected renderError(req: ConsoleRequest, res: Response, status: number, body: ErrorBody): void {
    const details = detailLines(body.details);
    if (req.path === `${CONSOLE_ROOT}/login` && req.method === 'POST') {
      const form = (req.body ?? {}) as { username?: unknown; next?: unknown };
      this.pages.signIn(req, res, {
        status,
        error: { text: body.message, details },
        username: typeof form.username === 'string' ? form.username : '',
        next: form.next,
      });
      return;
    }
    const retryable = status < 500 && status !== 401 && status !== 403;
    if (req.method !== 'GET' && req.consoleUser && retryable) {
      const form = (req.body ?? {}) as { _return?: unknown };
      this.pages.redirect(req, res, consoleReturnPath(form._return, req), {
        kind: 'error',
        text: body.message,
        details,
      });
      return;
    }
    this.pages.render(
      req,
      res,
      'error',
      { title: `Error ${status}`, status, message: body.message, details },
      status,
    );
  }
}
