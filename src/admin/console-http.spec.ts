import type { Request, Response } from 'express';
import {
  consoleReturnPath,
  isSameOrigin,
  setFlash,
  takeFlash,
  tokensMatch,
} from './console-http.js';

const req = (headers: Record<string, string>, protocol = 'http'): Request =>
  ({
    headers,
    protocol,
    get: (name: string) => headers[name.toLowerCase()],
    secure: protocol === 'https',
  }) as unknown as Request;

describe('consoleReturnPath', () => {
  const plain = req({ host: 'staff.example' });

  it.each([
    ['/admin/libraries?status=all&page=2', '/admin/libraries?status=all&page=2'],
    ['/admin', '/admin'],
    ['/admin/photos/', '/admin/photos/'],
  ])('keeps the console path %s', (given, expected) => {
    expect(consoleReturnPath(given, plain)).toBe(expected);
  });

  it.each([
    'https://evil.example/admin',
    '//evil.example/admin',
    '/admin//evil.example',
    '/api/v1/auth/me',
    '/administrator',
    'javascript:alert(1)',
    '/admin/x"><script>',
    '/admin\\evil',
    42,
  ])('replaces %p with the dashboard', (given) => {
    expect(consoleReturnPath(given, plain)).toBe('/admin');
  });

  it('falls back to a same-host Referer, never another host', () => {
    expect(
      consoleReturnPath(
        undefined,
        req({ host: 'staff.example', referer: 'http://staff.example/admin/reports?status=open' }),
      ),
    ).toBe('/admin/reports?status=open');
    expect(
      consoleReturnPath(
        undefined,
        req({ host: 'staff.example', referer: 'http://evil.example/admin/reports' }),
      ),
    ).toBe('/admin');
  });
});

describe('isSameOrigin', () => {
  it('accepts requests without Origin or with this origin, refuses other origins and cross-site fetches', () => {
    expect(isSameOrigin(req({ host: 'a.example' }))).toBe(true);
    expect(isSameOrigin(req({ host: 'a.example', origin: 'http://a.example' }))).toBe(true);
    expect(isSameOrigin(req({ host: 'a.example', origin: 'https://a.example' }, 'https'))).toBe(
      true,
    );
    expect(isSameOrigin(req({ host: 'a.example', origin: 'http://b.example' }))).toBe(false);
    expect(isSameOrigin(req({ host: 'a.example', origin: 'null' }))).toBe(false);
    expect(isSameOrigin(req({ host: 'a.example', 'sec-fetch-site': 'same-site' }))).toBe(false);
    expect(isSameOrigin(req({ host: 'a.example', 'sec-fetch-site': 'same-origin' }))).toBe(true);
  });
});

describe('tokensMatch', () => {
  it('needs the exact token', () => {
    expect(tokensMatch('abc', 'abc')).toBe(true);
    expect(tokensMatch('abc', 'abd')).toBe(false);
    expect(tokensMatch('abc', 'ab')).toBe(false);
    expect(tokensMatch('abc', undefined)).toBe(false);
    expect(tokensMatch('', '')).toBe(false);
  });
});

describe('flash', () => {
  const cookies: string[] = [];
  const res = {
    append: (_name: string, value: string) => cookies.push(value),
  } as unknown as Response;

  it('survives a round trip through its cookie, once', () => {
    setFlash(req({}), res, { kind: 'error', text: 'Refused.', details: ['a: b'] });
    const value = cookies[0].split(';')[0];
    expect(takeFlash(req({ cookie: value }), res)).toEqual({
      kind: 'error',
      text: 'Refused.',
      details: ['a: b'],
    });
    expect(cookies[1]).toMatch(/^bookcase_console_flash=; Max-Age=0/);
  });

  it('ignores a tampered or foreign cookie', () => {
    const bad = Buffer.from(JSON.stringify({ kind: 'script', text: 1 })).toString('base64url');
    expect(takeFlash(req({ cookie: `bookcase_console_flash=${bad}` }), res)).toBeNull();
    expect(takeFlash(req({ cookie: 'bookcase_console_flash=%%%' }), res)).toBeNull();
  });
});
