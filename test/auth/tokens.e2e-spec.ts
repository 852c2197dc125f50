import jwt from 'jsonwebtoken';
import request from 'supertest';
import { bearer, deactivateUser, registerUser, TEST_PASSWORD } from '../support/auth.js';
import { TEST_JWT_SECRET, type TestApp, itWithDatabaseServer } from '../support/app.js';
import { withClient } from '../support/database.js';
import { INVALID_CREDENTIALS, INVALID_REFRESH, UNAUTHORIZED } from '../support/errors.js';
import { useTestSuite } from '../support/suite.js';

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
}

let seq = 0;
function fresh(prefix = 'user'): { username: string; email: string; password: string } {
  seq += 1;
  const username = `${prefix}_${process.pid}_${seq}`;
  return { username, email: `${username}@example.org`, password: TEST_PASSWORD };
}

describe('register, login, refresh, me', () => {
  const api = (path: string) => `/api/v1/auth/${path}`;

  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
  /** POST /auth/refresh with this refresh token. */
  const refreshWith = (refresh: string) => request(t.http).post(api('refresh')).send({ refresh });
  /** GET /auth/me with this token as the bearer. */
  const getMe = (token: string) =>
    request(t.http).get(api('me')).set('Authorization', bearer(token));

  describe('POST /auth/register', () => {
    it('answers 201 with exactly {access, refresh}, private and uncached', async () => {
      const res = await request(t.http).post(api('register')).send(fresh()).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['access', 'refresh']);
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    it('issues HS256 tokens with sub, sid, typ, jti, iat, exp: access 5 minutes, refresh 30 days', async () => {
      const res = await request(t.http).post(api('register')).send(fresh()).expect(201);
      const access = claimsOf(res.body.access);
      const refresh = claimsOf(res.body.refresh);
      expect(headerOf(res.body.access).alg).toBe('HS256');
      expect(headerOf(res.body.refresh).alg).toBe('HS256');
      for (const claims of [access, refresh]) {
        expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'jti', 'sid', 'sub', 'typ']);
        expect(claims.sub).toMatch(/^\d+$/);
        expect(claims.iat).toBe(Math.floor(t.clock.now() / 1000));
      }
      expect(access.typ).toBe('access');
      expect(refresh.typ).toBe('refresh');
      expect(access.sid).toBe(refresh.sid);
      expect(access.jti).not.toBe(refresh.jti);
      expect((access.exp as number) - (access.iat as number)).toBe(300);
      expect((refresh.exp as number) - (refresh.iat as number)).toBe(30 * 86400);
    });

    it('trims the username and stores the email trimmed and lower-cased', async () => {
      const { username, password } = fresh();
      const res = await request(t.http)
        .post(api('register'))
        .send({
          username: `  ${username}  `,
          email: `  ${username.toUpperCase()}@Example.ORG `,
          password,
        })
        .expect(201);
      const me = await getMe(res.body.access).expect(200);
      expect(me.body).toEqual({
        id: expect.any(Number),
        username,
        email: `${username.toLowerCase()}@example.org`,
        is_social_only: false,
        is_staff: false,
        contributor_agreement_version: null,
        notifications: { email: true, push: true },
      });
    });

    it('400 Username already exists. (case-insensitive)', async () => {
      const taken = fresh();
      await request(t.http).post(api('register')).send(taken).expect(201);
      const res = await request(t.http)
        .post(api('register'))
        .send({ ...fresh(), username: ` ${taken.username.toUpperCase()} ` })
        .expect(400);
      expect(res.body).toEqual({ message: 'Username already exists.', details: null });
    });

    it('400 Email already exists. (case-insensitive)', async () => {
      const taken = fresh();
      await request(t.http).post(api('register')).send(taken).expect(201);
      const res = await request(t.http)
        .post(api('register'))
        .send({ ...fresh(), email: taken.email.toUpperCase() })
        .expect(400);
      expect(res.body).toEqual({ message: 'Email already exists.', details: null });
    });

    it.each([
      ['not-an-email'],
      ['a@b'],
      [''],
      ['two@@example.org'],
      [`${'x'.repeat(250)}@example.org`],
    ])('400 Provide a valid email address. for %j', async (email) => {
      const res = await request(t.http)
        .post(api('register'))
        .send({ ...fresh(), email })
        .expect(400);
      expect(res.body).toEqual({ message: 'Provide a valid email address.', details: null });
    });

    it.each([
      ['short1!', 'This password is too short. It must contain at least 8 characters.'],
      [
        'Zq7!vWp2'.repeat(16) + 'x',
        'This password is too long. It must contain at most 128 characters.',
      ],
      ['password', 'This password is too common.'],
      ['80417263951', 'This password is entirely numeric.'],
    ])('400 with the policy message for %j', async (password, message) => {
      const res = await request(t.http)
        .post(api('register'))
        .send({ ...fresh(), password })
        .expect(400);
      expect(res.body).toEqual({ message, details: null });
    });

    it('400 when the password is too similar to the username or the email', async () => {
      const user = { username: 'marguerite_lindqvist', email: 'bookworm.quixote@example.org' };
      const similarUser = await request(t.http)
        .post(api('register'))
        .send({ ...user, password: 'Marguerite_Lindqvist1' })
        .expect(400);
      expect(similarUser.body).toEqual({
        message: 'The password is too similar to the username.',
        details: null,
      });
      const similarEmail = await request(t.http)
        .post(api('register'))
        .send({ ...user, password: 'Bookworm.Quixote' })
        .expect(400);
      expect(similarEmail.body).toEqual({
        message: 'The password is too similar to the email.',
        details: null,
      });
    });

    it('422 for missing or ill-typed fields, with loc under body', async () => {
      const res = await request(t.http)
        .post(api('register'))
        .send({ username: 42, password: ['x'] })
        .expect(422);
      expect(res.body.message).toBe('Validation error.');
      const locs = res.body.details.errors.map((error: { loc: unknown[] }) => error.loc);
      expect(locs).toEqual(
        expect.arrayContaining([
          ['body', 'username'],
          ['body', 'email'],
          ['body', 'password'],
        ]),
      );
    });

    it('422 for a username outside 3–150 characters after trimming', async () => {
      for (const username of ['  ab  ', 'x'.repeat(151)]) {
        const res = await request(t.http)
          .post(api('register'))
          .send({ ...fresh(), username })
          .expect(422);
        expect(res.body.details.errors[0].loc).toEqual(['body', 'username']);
      }
    });

    it('ignores an Authorization header, even a garbage one', async () => {
      await request(t.http)
        .post(api('register'))
        .set('Authorization', 'Bearer garbage')
        .send(fresh())
        .expect(201);
    });

    itWithDatabaseServer(
      'lets exactly one of 10 concurrent identical registrations through; the rest get 400',
      async () => {
        const same = fresh('race');
        const responses = await Promise.all(
          Array.from({ length: 10 }, () => request(t.http).post(api('register')).send(same)),
        );
        const statuses = responses.map((res) => res.status).sort();
        expect(statuses).toEqual([201, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
        for (const res of responses.filter((r) => r.status === 400)) {
          expect(res.body).toEqual({ message: 'Username already exists.', details: null });
        }
      },
    );

    itWithDatabaseServer(
      'lets exactly one of 10 concurrent registrations with one email through',
      async () => {
        const email = fresh('race').email;
        const responses = await Promise.all(
          Array.from({ length: 10 }, () =>
            request(t.http)
              .post(api('register'))
              .send({ ...fresh('racer'), email }),
          ),
        );
        expect(responses.filter((res) => res.status === 201)).toHaveLength(1);
        for (const res of responses.filter((r) => r.status !== 201)) {
          expect(res.status).toBe(400);
          expect(res.body).toEqual({ message: 'Email already exists.', details: null });
        }
      },
    );
  });

  describe('POST /auth/login', () => {
    it('200 {access, refresh} by username, case-insensitive and trimmed', async () => {
      const user = await registerUser(t.http);
      const res = await request(t.http)
        .post(api('login'))
        .send({ username: `  ${user.username.toUpperCase()} `, password: user.password })
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['access', 'refresh']);
      expect(claimsOf(res.body.access).sub).toBe(String(user.id));
      expect(claimsOf(res.body.access).sid).not.toBe(claimsOf(user.access).sid);
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    it('200 by email, case-insensitive and trimmed', async () => {
      const user = await registerUser(t.http);
      const res = await request(t.http)
        .post(api('login'))
        .send({ username: ` ${user.email.toUpperCase()}  `, password: user.password })
        .expect(200);
      expect(claimsOf(res.body.access).sub).toBe(String(user.id));
    });

    it('finds the email owner even when another account (other password) is named like that email', async () => {
      const owner = await registerUser(t.http);
      await registerUser(t.http, {
        username: owner.email,
        email: `other_${owner.email}`,
        password: 'Another-Lantern-8420',
      });
      const res = await request(t.http)
        .post(api('login'))
        .send({ username: owner.email, password: owner.password })
        .expect(200);
      expect(claimsOf(res.body.access).sub).toBe(String(owner.id));
    });

    it('401 Invalid credentials. for a wrong password', async () => {
      const user = await registerUser(t.http);
      const res = await request(t.http)
        .post(api('login'))
        .send({ username: user.username, password: 'Wrong-Password-123' })
        .expect(401);
      expect(res.body).toEqual(INVALID_CREDENTIALS);
    });

    it('401 Invalid credentials. for an unknown user, an empty identifier and a huge password', async () => {
      for (const body of [
        { username: 'nobody_at_all', password: TEST_PASSWORD },
        { username: '   ', password: TEST_PASSWORD },
        { username: 'nobody_at_all', password: 'x'.repeat(5000) },
      ]) {
        const res = await request(t.http).post(api('login')).send(body).expect(401);
        expect(res.body).toEqual(INVALID_CREDENTIALS);
      }
    });

    it('401 Invalid credentials. for an inactive user, even with the right password', async () => {
      const user = await registerUser(t.http);
      await deactivateUser(db.url, user.id);
      const res = await request(t.http)
        .post(api('login'))
        .send({ username: user.username, password: user.password })
        .expect(401);
      expect(res.body).toEqual(INVALID_CREDENTIALS);
    });

    it('422 for a missing password', async () => {
      const res = await request(t.http)
        .post(api('login'))
        .send({ username: 'someone' })
        .expect(422);
      expect(res.body.details.errors[0].loc).toEqual(['body', 'password']);
    });

    it('records the last login time', async () => {
      const user = await registerUser(t.http);
      t.clock.advance(1000);
      await request(t.http)
        .post(api('login'))
        .send({ username: user.username, password: user.password })
        .expect(200);
      const { rows } = await withClient(db.url, (client) =>
        client.query('SELECT last_login_at FROM users WHERE id = $1', [user.id]),
      );
      expect(new Date(rows[0].last_login_at).getTime()).toBe(t.clock.now());
    });
  });

  describe('POST /auth/refresh', () => {
    it('200 with exactly {access}: a new access token of the same session', async () => {
      const user = await registerUser(t.http);
      t.clock.advance(2000);
      const res = await refreshWith(user.refresh).expect(200);
      expect(Object.keys(res.body)).toEqual(['access']);
      const claims = claimsOf(res.body.access);
      expect(claims).toMatchObject({
        typ: 'access',
        sub: String(user.id),
        sid: claimsOf(user.refresh).sid,
      });
      expect(res.body.access).not.toBe(user.access);
      await getMe(res.body.access).expect(200);
    });

    it('reuses the refresh token (no rotation)', async () => {
      const user = await registerUser(t.http);
      await refreshWith(user.refresh).expect(200);
      await refreshWith(user.refresh).expect(200);
    });

    it.each([
      ['garbage', 'not-a-jwt'],
      ['empty', ''],
      [
        'signed with another secret',
        jwt.sign(
          { sub: '1', sid: '00000000-0000-4000-8000-000000000000', typ: 'refresh', jti: 'x' },
          'another-secret-another-secret-0123456789',
        ),
      ],
      [
        'unsigned (alg none)',
        jwt.sign(
          { sub: '1', sid: '00000000-0000-4000-8000-000000000000', typ: 'refresh', jti: 'x' },
          '',
          { algorithm: 'none' },
        ),
      ],
    ])('401 Invalid or expired refresh token. for a %s token', async (_name, refresh) => {
      const res = await refreshWith(refresh).expect(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });

    it('401 Invalid or expired refresh token. for an access token', async () => {
      const user = await registerUser(t.http);
      const res = await refreshWith(user.access).expect(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });

    it('401 for a well-signed refresh token of a session that does not exist', async () => {
      const refresh = jwt.sign(
        {
          sub: '1',
          sid: '00000000-0000-4000-8000-000000000000',
          typ: 'refresh',
          jti: 'x',
          exp: Math.floor(t.clock.now() / 1000) + 60,
        },
        TEST_JWT_SECRET,
      );
      const res = await refreshWith(refresh).expect(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });

    it('401 for a refresh token of an inactive user', async () => {
      const user = await registerUser(t.http);
      await deactivateUser(db.url, user.id);
      const res = await refreshWith(user.refresh).expect(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });

    it('401 once the refresh token has expired (30 days)', async () => {
      const user = await registerUser(t.http);
      t.clock.advance(30 * 86400 * 1000 - 1000);
      await refreshWith(user.refresh).expect(200);
      t.clock.advance(1000);
      const res = await refreshWith(user.refresh).expect(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });

    it('422 for a missing refresh field', async () => {
      const res = await request(t.http).post(api('refresh')).send({}).expect(422);
      expect(res.body.details.errors[0].loc).toEqual(['body', 'refresh']);
    });

    it('ignores an Authorization header', async () => {
      const user = await registerUser(t.http);
      await request(t.http)
        .post(api('refresh'))
        .set('Authorization', 'Bearer garbage')
        .send({ refresh: user.refresh })
        .expect(200);
    });
  });

  describe('GET /auth/me', () => {
    it('200 with the User object', async () => {
      const user = await registerUser(t.http);
      const res = await getMe(user.access).expect(200);
      expect(res.body).toEqual({
        id: user.id,
        username: user.username,
        email: user.email,
        is_social_only: false,
        is_staff: false,
        contributor_agreement_version: null,
        notifications: { email: true, push: true },
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    it('401 Unauthorized without a token', async () => {
      const res = await request(t.http).get(api('me')).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it.each([
      ['garbage', 'Bearer garbage'],
      ['not a bearer scheme', 'Basic dXNlcjpwYXNz'],
      ['empty bearer', 'Bearer '],
    ])('401 Unauthorized for a %s header', async (_name, header) => {
      const res = await request(t.http).get(api('me')).set('Authorization', header).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('401 Unauthorized for a refresh token used as an access token', async () => {
      const user = await registerUser(t.http);
      const res = await getMe(user.refresh).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('401 Unauthorized for tokens signed with another secret or unsigned', async () => {
      const user = await registerUser(t.http);
      const claims = claimsOf(user.access);
      for (const token of [
        jwt.sign(claims, 'another-secret-another-secret-0123456789'),
        jwt.sign(claims, '', { algorithm: 'none' }),
        jwt.sign(claims, TEST_JWT_SECRET, { algorithm: 'HS512' }),
      ]) {
        const res = await getMe(token).expect(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it('401 Unauthorized once the access token has expired (5 minutes); refresh gives a working one', async () => {
      const user = await registerUser(t.http);
      t.clock.advance(299_000);
      await getMe(user.access).expect(200);
      t.clock.advance(1000);
      const res = await getMe(user.access).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      const refreshed = await refreshWith(user.refresh).expect(200);
      await getMe(refreshed.body.access).expect(200);
    });

    it('401 Unauthorized for an inactive user', async () => {
      const user = await registerUser(t.http);
      await deactivateUser(db.url, user.id);
      const res = await getMe(user.access).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('401 Unauthorized for a token whose sub does not own the session', async () => {
      const a = await registerUser(t.http);
      const b = await registerUser(t.http);
      const forged = jwt.sign({ ...claimsOf(a.access), sub: String(b.id) }, TEST_JWT_SECRET);
      const res = await getMe(forged).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });
});

describe('token lifetimes come from JWT_ACCESS_TTL / JWT_REFRESH_TTL', () => {
  let t: TestApp;

  useTestSuite(
    {
      env: { RATE_LIMIT_ENABLED: 'false', JWT_ACCESS_TTL: '1m', JWT_REFRESH_TTL: '2d' },
    },
    (s) => ({ t } = s),
  );

  it('issues tokens with the configured lifetimes', async () => {
    const user = await registerUser(t.http);
    const access = claimsOf(user.access);
    const refresh = claimsOf(user.refresh);
    expect((access.exp as number) - (access.iat as number)).toBe(60);
    expect((refresh.exp as number) - (refresh.iat as number)).toBe(2 * 86400);
  });

  it('never lets an access token outlive its session', async () => {
    const user = await registerUser(t.http);
    t.clock.advance(2 * 86400 * 1000 - 30_000);
    const res = await request(t.http)
      .post('/api/v1/auth/refresh')
      .send({ refresh: user.refresh })
      .expect(200);
    expect(claimsOf(res.body.access).exp).toBe(claimsOf(user.refresh).exp);
  });
});
