import { parse, serialize, type SerializeOptions } from 'cookie';
import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

export const CONSOLE_ROOT = '/admin';
export const SESSION_COOKIE = 'bookcase_console';
/** The sign-in form's CSRF token (double submit): there is no session to hold it yet. */
export const SIGN_IN_CSRF_COOKIE = 'bookcase_console_signin';
const FLASH_COOKIE = 'bookcase_console_flash';
const FLASH_MAX_CHARS = 3000;

/**
 * No inline script or style anywhere: scripts and styles come from /admin/assets, images from this origin (media)
 * or data: URLs; nothing may frame the console, and forms post only to it.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function setConsoleSecurityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'private, no-store');
}

export function readCookie(req: Request, name: string): string {
  const header = req.headers.cookie;
  if (!header) return '';
  return parse(header)[name] ?? '';
}

function cookieOptions(req: Request, maxAgeSeconds?: number): SerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'strict',
    secure: req.secure,
    path: CONSOLE_ROOT,
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

export function setCookie(
  req: Request,
  res: Response,
  name: string,
  value: string,
  maxAgeSeconds?: number,
): void {
  res.append('Set-Cookie', serialize(name, value, cookieOptions(req, maxAgeSeconds)));
}

export function clearCookie(req: Request, res: Response, name: string): void {
  res.append('Set-Cookie', serialize(name, '', { ...cookieOptions(req, 0), expires: new Date(0) }));
}

export function tokensMatch(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || !expected) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A browser's cross-site POST is refused even before the token check: `Sec-Fetch-Site` (sent by current browsers)
 * must not say cross-site, and an `Origin` header, when present, must be this host.
 */
export function isSameOrigin(req: Request): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (!origin) return true;
  return origin === `${req.protocol}://${req.get('host') ?? ''}`;
}

export interface Flash {
  kind: 'notice' | 'error';
  text: string;
  details?: string[];
}

/** A message for the page a POST redirects to, carried by a short-lived cookie and shown once. */
export function setFlash(req: Request, res: Response, flash: Flash): void {
  const fitted: Flash = { ...flash, text: flash.text.slice(0, 300) };
  let encoded = Buffer.from(JSON.stringify(fitted)).toString('base64url');
  if (encoded.length > FLASH_MAX_CHARS) {
    encoded = Buffer.from(JSON.stringify({ kind: fitted.kind, text: fitted.text })).toString(
      'base64url',
    );
  }
  setCookie(req, res, FLASH_COOKIE, encoded, 60);
}

export function takeFlash(req: Request, res: Response): Flash | null {
  const raw = readCookie(req, FLASH_COOKIE);
  if (!raw) return null;
  clearCookie(req, res, FLASH_COOKIE);
  try {
    const value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Flash>;
    if ((value.kind !== 'notice' && value.kind !== 'error') || typeof value.text !== 'string')
      return null;
    const details = Array.isArray(value.details)
      ? value.details.filter((d): d is string => typeof d === 'string').slice(0, 20)
      : undefined;
    return { kind: value.kind, text: value.text, details };
  } catch {
    return null;
  }
}

/** A path inside the console to go back to; anything else (other hosts, other paths) becomes the dashboard. */
export function consoleReturnPath(candidate: unknown, req: Request): string {
  let value = typeof candidate === 'string' ? candidate : '';
  if (!value) {
    const referer = req.headers.referer ?? '';
    try {
      const url = new URL(referer);
      if (url.host === req.get('host')) value = url.pathname + url.search;
    } catch {
      value = '';
    }
  }
  return /^\/admin(\/[A-Za-z0-9._~\-/]*)?(\?[A-Za-z0-9._~\-=&%+]*)?$/.test(value) &&
    !value.includes('//')
    ? value
    : CONSOLE_ROOT;
}
