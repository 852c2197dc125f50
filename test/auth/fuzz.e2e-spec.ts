import fc from 'fast-check';
import request from 'supertest';
import { bearer, registerUser, type RegisteredUser } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import { useTestSuite } from '../support/suite.js';

const RUNS = 100;

/** Any JSON value, with the endpoint's own field names often among the keys and odd values among the leaves. */
function bodies(fields: string[]): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.constantFrom(
      '',
      ' ',
      'DELETE',
      'apple',
      'google',
      'a@b.co',
      'Quiet-Lantern-7319',
      '__proto__',
    ),
    fc.constant('x'.repeat(200_000)),
    fc.integer(),
    fc.double(),
    fc.constant(null),
  );
  const key = fc.oneof(
    fc.constantFrom(...fields),
    fc.string({ maxLength: 20 }),
    fc.constantFrom('__proto__', 'constructor', 'prototype'),
  );
  const object = fc.dictionary(key, leaf, { maxKeys: 8 });
  return fc.oneof(
    { weight: 6, arbitrary: object },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 1, arbitrary: fc.array(object, { maxLength: 3 }) },
  );
}

describe('auth endpoints never answer 500, whatever the JSON body (fast-check)', () => {
  let t: TestApp;
  let local: RegisteredUser;

  useTestSuite(
    {
      env: {
        RATE_LIMIT_ENABLED: 'false',
        APPLE_CLIENT_IDS: 'com.example.bookcase',
        APPLE_JWKS_URL: 'http://127.0.0.1:9/keys',
      },
    },
    (s) => ({ t } = s),
  );

  beforeAll(async () => {
    local = await registerUser(t.http);
  });

  const endpoints: [string, 'post' | 'patch' | 'put' | 'delete', string, string[], boolean][] = [
    [
      'POST /auth/register',
      'post',
      '/api/v1/auth/register',
      ['username', 'email', 'password'],
      false,
    ],
    ['POST /auth/login', 'post', '/api/v1/auth/login', ['username', 'password'], false],
    ['POST /auth/refresh', 'post', '/api/v1/auth/refresh', ['refresh'], false],
    [
      'POST /auth/social',
      'post',
      '/api/v1/auth/social',
      ['provider', 'id_token', 'first_name', 'last_name'],
      false,
    ],
    ['PATCH /auth/me/email', 'patch', '/api/v1/auth/me/email', ['email'], true],
    [
      'PUT /auth/me/password',
      'put',
      '/api/v1/auth/me/password',
      ['current_password', 'new_password', 'new_password_confirm'],
      true,
    ],
    ['DELETE /auth/me', 'delete', '/api/v1/auth/me', ['password', 'confirm_text'], true],
    ['POST /auth/devices', 'post', '/api/v1/auth/devices', ['token', 'environment'], true],
  ];

  it.each(endpoints)('%s', async (_name, method, path, fields, authenticated) => {
    await fc.assert(
      fc.asyncProperty(bodies(fields), async (body) => {
        let req = request(t.http)[method](path).set('Content-Type', 'application/json');
        if (authenticated) req = req.set('Authorization', bearer(local.access));
        const res = await req.send(JSON.stringify(body));
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) expect(Object.keys(res.body).sort()).toEqual(['details', 'message']);
      }),
      { numRuns: RUNS },
    );
  });
});
