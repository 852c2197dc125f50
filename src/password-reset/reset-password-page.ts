import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import type { Request, Response } from 'express';
import { parse, serialize } from 'cookie';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { isSameOrigin, setConsoleSecurityHeaders, tokensMatch } from '../admin/console-http.js';
import { RESET_PAGE_PATH } from './password-reset.service.js';

const VIEWS_DIR = fileURLToPath(new URL('./views/', import.meta.url));
/** The form's CSRF token (double submit: there is no session), scoped to the page. */
const CSRF_COOKIE = 'bookcase_reset_csrf';

export type ResetPageState =
  | { view: 'form'; token: string; error?: string }
  | { view: 'invalid'; message: string }
  | { view: 'done'; message: string }
  | { view: 'error'; message: string };

/**
 * The reset page, with the staff console's look (its stylesheet), its Content-Security-Policy and headers, and its
 * double-submit CSRF rule for a form without a session.
 */
@Injectable()
export class ResetPasswordPage {
  private readonly eta = new Eta({ views: VIEWS_DIR, cache: true, autoEscape: true });

  render(req: Request, res: Response, state: ResetPageState, status = 200): void {
    let csrf = '';
    if (state.view === 'form') {
      csrf = randomBytes(24).toString('base64url');
      res.append(
        'Set-Cookie',
        serialize(CSRF_COOKIE, csrf, {
          httpOnly: true,
          sameSite: 'strict',
          secure: req.secure,
          path: RESET_PAGE_PATH,
          maxAge: 3600,
        }),
      );
    }
    const html = this.eta.render('reset-password', { ...state, csrf, action: RESET_PAGE_PATH });
    // The console's headers, Referrer-Policy `same-origin` included: the token in the address reaches only this
    // origin (the page loads nothing from elsewhere). `no-referrer` would make browsers post `Origin: null`.
    setConsoleSecurityHeaders(res);
    res.status(status).type('html').send(html);
  }

  /** A post from this origin whose hidden `_csrf` equals its cookie. */
  csrfValid(req: Request): boolean {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const cookie = parse(req.headers.cookie ?? '')[CSRF_COOKIE] ?? '';
    return isSameOrigin(req) && tokensMatch(cookie, body._csrf);
  }
}
