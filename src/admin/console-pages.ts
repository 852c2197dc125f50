import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import type { Request, Response } from 'express';
import { fileURLToPath } from 'node:url';
import type { PaginationMeta } from '../common/pagination/pagination.js';
import { randomBytes } from 'node:crypto';
import {
  consoleReturnPath,
  CONSOLE_ROOT,
  setConsoleSecurityHeaders,
  setCookie,
  setFlash,
  SIGN_IN_CSRF_COOKIE,
  takeFlash,
  type Flash,
} from './console-http.js';
import type { ConsoleUser } from './console-session.service.js';

export type ConsoleRequest = Request & { consoleUser?: ConsoleUser };

export type ConsoleSection =
  'dashboard' | 'libraries' | 'photos' | 'reports' | 'contributions' | 'audit' | 'none';

/** The signed-in staff member of a console request (behind the session guard), as the services' actor. */
export const consoleActor = (req: ConsoleRequest) => ({
  id: req.consoleUser!.id,
  username: req.consoleUser!.username,
});

const VIEWS_DIR = fileURLToPath(new URL('./views/', import.meta.url));

/** Previous/next links of a list page (its page number in `param`), keeping every other query parameter. */
export interface Pager {
  label: string;
  previous: string | null;
  next: string | null;
}

export function pager(req: Request, pagination: PaginationMeta, param = 'page'): Pager {
  const link = (page: number) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(req.query)) {
      if (typeof value === 'string' && key !== param && value !== '') params.set(key, value);
    }
    params.set(param, String(page));
    return `${req.path}?${params.toString()}`;
  };
  return {
    label: `Page ${pagination.page} of ${pagination.total_pages} · ${pagination.total} in all`,
    previous: pagination.has_previous ? link(pagination.page - 1) : null,
    next: pagination.has_next ? link(pagination.page + 1) : null,
  };
}

/** ISO timestamp → `2026-11-21 14:03 UTC` (the console shows UTC everywhere). */
export function formatTime(value: string | Date | null | undefined): string {
  if (!value) return '';
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Renders console pages: Eta templates with auto-escaping, inside one layout that receives the signed-in user, the
 * session's CSRF token and the one-time flash message. Every page carries the console's security headers.
 */
@Injectable()
export class ConsolePages {
  private readonly eta = new Eta({ views: VIEWS_DIR, cache: true, autoEscape: true });

  render(
    req: ConsoleRequest,
    res: Response,
    view: string,
    data: { title: string; section?: ConsoleSection } & Record<string, unknown>,
    status = 200,
  ): void {
    const flash = takeFlash(req, res);
    const html = this.eta.render(view, {
      section: 'none',
      ...data,
      user: req.consoleUser ?? null,
      csrf: req.consoleUser?.csrfToken ?? '',
      flash,
      here: req.originalUrl,
      formatTime,
    });
    setConsoleSecurityHeaders(res);
    res.status(status).type('html').send(html);
  }

  /** A list page: `page`'s items with their pager, beside the other data (the filters' query and the like). */
  renderList(
    req: ConsoleRequest,
    res: Response,
    view: string,
    page: { pagination: PaginationMeta },
    data: { title: string; section: ConsoleSection } & Record<string, unknown>,
  ): void {
    this.render(req, res, view, { ...data, page, pager: pager(req, page.pagination) });
  }

  /** The sign-in form, with a fresh double-submit CSRF token (cookie and hidden field). */
  signIn(
    req: ConsoleRequest,
    res: Response,
    options: { status?: number; error?: Omit<Flash, 'kind'>; username?: string; next?: unknown },
  ): void {
    const csrf = randomBytes(24).toString('base64url');
    setCookie(req, res, SIGN_IN_CSRF_COOKIE, csrf, 3600);
    const next = consoleReturnPath(options.next, req);
    this.render(
      req,
      res,
      'login',
      {
        title: 'Sign in',
        signInCsrf: csrf,
        error: options.error ?? null,
        username: options.username ?? '',
        next: next === `${CONSOLE_ROOT}/login` ? CONSOLE_ROOT : next,
      },
      options.status ?? 200,
    );
  }

  /** Post/redirect/get: 303 to a console path, with a message for the next page. */
  redirect(req: Request, res: Response, path: string, flash?: Flash): void {
    if (flash) setFlash(req, res, flash);
    setConsoleSecurityHeaders(res);
    res.redirect(303, path);
  }
}
