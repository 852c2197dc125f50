import jwt from 'jsonwebtoken';
import request from 'supertest';
import { JwtStrategy } from '../../src/auth/jwt.strategy.js';
import { SessionChecks } from '../../src/auth/session-checks.js';
import {
  bearer,
  deactivateUser,
  loginUser,
  makeStaff,
  registerUser,
  type RegisteredUser,
} from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import { queryRows, type TestDatabase } from '../support/database.js';
import { StaffProbeModule } from '../support/staff-probe.module.js';
import { STAFF_REQUIRED, UNAUTHORIZED } from '../support/errors.js';
import { useTestSuite } from '../support/suite.js';

describe('global JWT and staff guards', () => {
  let db: TestDatabase;
  let t: TestApp;
  let user: RegisteredUser;
  /** GET a probe route, with this Authorization header when given. */
  const getProbe = (path: string, authorization?: string) => {
    const req = request(t.http).get(`/api/v1/staff-probe/${path}`);
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };

  const suite = useTestSuite(
    {
      imports: [StaffProbeModule],
      env: { RATE_LIMIT_ENABLED: 'false' },
    },
    (s) => ({ db, t } = s),
  );

  beforeAll(async () => {
    user = await registerUser(t.http);
  });

  describe('a route without decorators requires a valid access token', () => {
    it('401 Unauthorized without a token', async () => {
      const res = await getProbe('private').expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(res.headers['content-type']).toMatch(/application\/json/);
    });

    it('401 Unauthorized with a bad token', async () => {
      const res = await getProbe('private', 'Bearer nope').expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('200 with the caller as AuthUser {id, username, isStaff, sessionId}', async () => {
      const res = await getProbe('private', bearer(user.access)).expect(200);
      const sid = (jwt.decode(user.access) as { sid: string }).sid;
      expect(res.body).toEqual({
        user: { id: user.id, username: user.username, isStaff: false, sessionId: sid },
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
    });
  });

  describe('@StaffOnly()', () => {
    it('401 Unauthorized without a token', async () => {
      const res = await getProbe('staff').expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('403 Staff access required. for a signed-in non-staff user', async () => {
      const res = await getProbe('staff', bearer(user.access)).expect(403);
      expect(res.body).toEqual(STAFF_REQUIRED);
    });

    it('200 for staff, read from the database on every request', async () => {
      const staff = await registerUser(t.http);
      await makeStaff(db.url, staff.id);
      const res = await getProbe('staff', bearer(staff.access)).expect(200);
      expect(res.body.user).toMatchObject({ id: staff.id, isStaff: true });
      const me = await request(t.http)
        .get('/api/v1/auth/me')
        .set('Authorization', bearer(staff.access))
        .expect(200);
      expect(me.body.is_staff).toBe(true);
      await queryRows(db.url, 'UPDATE users SET is_staff = false WHERE id = $1', [staff.id]);
      const demoted = await getProbe('staff', bearer(staff.access)).expect(403);
      expect(demoted.body).toEqual(STAFF_REQUIRED);
    });
  });

  describe('@OptionalAuth()', () => {
    it('is anonymous without a token', async () => {
      const res = await getProbe('optional').expect(200);
      expect(res.body).toEqual({ user: null });
    });

    it('is anonymous with a garbage token', async () => {
      const res = await getProbe('optional', 'Bearer garbage').expect(200);
      expect(res.body).toEqual({ user: null });
    });

    it('is anonymous with a refresh token, an expired access token, or one of a deleted session', async () => {
      const other = await registerUser(t.http);
      const refresh = await getProbe('optional', bearer(other.refresh)).expect(200);
      expect(refresh.body).toEqual({ user: null });
      await queryRows(db.url, 'DELETE FROM refresh_sessions WHERE user_id = $1', [other.id]);
      const revoked = await getProbe('optional', bearer(other.access)).expect(200);
      expect(revoked.body).toEqual({ user: null });
    });

    it('is anonymous once the access token expired', async () => {
      const other = await registerUser(t.http);
      t.clock.advance(301_000);
      const res = await getProbe('optional', bearer(other.access)).expect(200);
      expect(res.body).toEqual({ user: null });
    });

    it('knows the caller with a valid token', async () => {
      const other = await registerUser(t.http);
      const res = await getProbe('optional', bearer(other.access)).expect(200);
      expect(res.body.user).toMatchObject({
        id: other.id,
        username: other.username,
        isStaff: false,
      });
    });
  });

  describe('@Public()', () => {
    it('never reads the token', async () => {
      const fresh = await registerUser(t.http);
      const res = await getProbe('public', bearer(fresh.access)).expect(200);
      expect(res.body).toEqual({ user: null });
      await getProbe('public', 'Bearer garbage').expect(200);
    });
  });

  describe('a token signature is verified once; its claims and session on every request', () => {
    const verified = () => t.app.get(JwtStrategy).verified;

    it('the second request with a token is answered from the memo of verified tokens', async () => {
      const other = await registerUser(t.http);
      // A new access token of the same session, never used before.
      const refreshed = await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refresh: other.refresh })
        .expect(200);
      const access = refreshed.body.access as string;
      const hits = verified().hits;
      await getProbe('private', bearer(access)).expect(200);
      expect(verified().hits).toBe(hits);
      await getProbe('private', bearer(access)).expect(200);
      expect(verified().hits).toBe(hits + 1);
    });

    it('a remembered token: 401 once its session is gone or its user deactivated, on the very next request', async () => {
      const gone = await registerUser(t.http);
      await getProbe('private', bearer(gone.access)).expect(200);
      await getProbe('private', bearer(gone.access)).expect(200);
      await queryRows(db.url, 'DELETE FROM refresh_sessions WHERE user_id = $1', [gone.id]);
      let res = await getProbe('private', bearer(gone.access)).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);

      const inactive = await registerUser(t.http);
      await getProbe('private', bearer(inactive.access)).expect(200);
      await getProbe('private', bearer(inactive.access)).expect(200);
      await deactivateUser(db.url, inactive.id);
      res = await getProbe('private', bearer(inactive.access)).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('a remembered token: 401 once it has expired, and it is forgotten', async () => {
      const other = await registerUser(t.http);
      await getProbe('private', bearer(other.access)).expect(200);
      await getProbe('private', bearer(other.access)).expect(200);
      const size = verified().size;
      t.clock.advance(301_000);
      const res = await getProbe('private', bearer(other.access)).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(verified().size).toBe(size - 1);
    });

    it('the memo is keyed by the whole token: another signature on the same claims is checked (401)', async () => {
      const other = await registerUser(t.http);
      await getProbe('private', bearer(other.access)).expect(200);
      const [header, claims, signature] = other.access.split('.');
      const middle = Math.floor(signature.length / 2);
      const flipped = signature[middle] === 'A' ? 'B' : 'A';
      const forged = `${header}.${claims}.${signature.slice(0, middle)}${flipped}${signature.slice(middle + 1)}`;
      const res = await getProbe('private', bearer(forged)).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });

  describe('session checks of requests that arrive together share one statement', () => {
    const sidOf = (access: string) => (jwt.decode(access) as { sid: string }).sid;

    it('one statement answers each check for its own session and subject', async () => {
      const checks = t.app.get(SessionChecks);
      const a = await registerUser(t.http);
      const b = await registerUser(t.http);
      const revoked = await registerUser(t.http);
      await queryRows(db.url, 'UPDATE refresh_sessions SET revoked_at = now() WHERE user_id = $1', [
        revoked.id,
      ]);
      const statements = checks.statements;
      const [forA, forB, againA, wrongSubject, ofRevoked] = await Promise.all([
        checks.liveSessionUser(sidOf(a.access), a.id),
        checks.liveSessionUser(sidOf(b.access), b.id),
        checks.liveSessionUser(sidOf(a.access), a.id),
        checks.liveSessionUser(sidOf(a.access), b.id),
        checks.liveSessionUser(sidOf(revoked.access), revoked.id),
      ]);
      expect(checks.statements).toBe(statements + 1);
      expect(forA).toMatchObject({ id: a.id, username: a.username, isStaff: false });
      expect(againA).toEqual(forA);
      expect(forB).toMatchObject({ id: b.id, username: b.username, isStaff: false });
      expect(wrongSubject).toBeNull();
      expect(ofRevoked).toBeNull();
    });

    it('concurrent requests: each is its own caller, a revoked session among them 401', async () => {
      const users = await Promise.all([1, 2, 3, 4].map(() => registerUser(t.http)));
      await queryRows(db.url, 'UPDATE refresh_sessions SET revoked_at = now() WHERE user_id = $1', [
        users[3].id,
      ]);
      const answers = await Promise.all(
        users.map((user) => getProbe('private', bearer(user.access))),
      );
      for (const [i, user] of users.slice(0, 3).entries())
        expect(answers[i].body).toEqual({
          user: {
            id: user.id,
            username: user.username,
            isStaff: false,
            sessionId: sidOf(user.access),
          },
        });
      expect(answers[3].status).toBe(401);
      expect(answers[3].body).toEqual(UNAUTHORIZED);
    });

    it('a session revoked through one instance is refused by another on the very next request', async () => {
      const other = await suite.startApp();
      const user = await registerUser(t.http);
      const second = await loginUser(t.http, user.username, user.password);
      // Both instances accepted (and remembered) the token.
      for (const app of [t, other]) {
        await request(app.http)
          .get('/api/v1/auth/me')
          .set('Authorization', bearer(second.access))
          .expect(200);
        await request(app.http)
          .get('/api/v1/auth/me')
          .set('Authorization', bearer(second.access))
          .expect(200);
      }
      // A password change on the first instance revokes every other session of the user.
      await request(t.http)
        .put('/api/v1/auth/me/password')
        .set('Authorization', bearer(user.access))
        .send({
          current_password: user.password,
          new_password: 'Amber-Harbour-5521',
          new_password_confirm: 'Amber-Harbour-5521',
        })
        .expect(200);
      for (const app of [other, t]) {
        const res = await request(app.http)
          .get('/api/v1/auth/me')
          .set('Authorization', bearer(second.access))
          .expect(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
      await request(other.http)
        .get('/api/v1/auth/me')
        .set('Authorization', bearer(user.access))
        .expect(200);
    });
  });
});

describe('guard order: the rate limit comes before authentication', () => {
  let t: TestApp;

  useTestSuite(
    {
      imports: [StaffProbeModule],
      env: { RATE_LIMIT_READ: '2' },
    },
    (s) => ({ t } = s),
  );

  it('answers 429 (not 401) once an anonymous caller is over the limit', async () => {
    await request(t.http).get('/api/v1/staff-probe/private').expect(401);
    await request(t.http).get('/api/v1/staff-probe/private').expect(401);
    const res = await request(t.http).get('/api/v1/staff-probe/private').expect(429);
    expect(res.body).toEqual({
      message: 'Too many requests. Please try again later.',
      details: { retry_after: expect.any(Number) },
    });
  });

  it('answers 429 (not 403) on a staff route too', async () => {
    await request(t.http).get('/api/v1/staff-probe/staff').expect(401);
    await request(t.http).get('/api/v1/staff-probe/staff').expect(401);
    await request(t.http).get('/api/v1/staff-probe/staff').expect(429);
  });
});
