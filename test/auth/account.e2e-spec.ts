import request from 'supertest';
import { bearer, loginUser, registerUser, TEST_PASSWORD } from '../support/auth.js';
import { countRows } from '../support/database.js';
import { errorBody as error, INVALID_REFRESH, UNAUTHORIZED } from '../support/errors.js';
import { useTestSuite } from '../support/suite.js';

describe('account changes: email, password, deletion', () => {
  const api = (path: string) => `/api/v1/auth/${path}`;
  const count = (sql: string, params: unknown[]) => countRows(db.url, sql, params);

  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  /** Both tokens of a session are refused: the access token with 401, the refresh token as invalid. */
  async function expectSessionRefused(session: { access: string; refresh: string }) {
    const me = await request(t.http)
      .get(api('me'))
      .set('Authorization', bearer(session.access))
      .expect(401);
    expect(me.body).toEqual(UNAUTHORIZED);
    const refresh = await request(t.http)
      .post(api('refresh'))
      .send({ refresh: session.refresh })
      .expect(401);
    expect(refresh.body).toEqual(INVALID_REFRESH);
  }

  describe('PATCH /auth/me/email', () => {
    it('200 with the User object; the email is stored trimmed and lower-cased', async () => {
      const user = await registerUser(t.http);
      const res = await request(t.http)
        .patch(api('me/email'))
        .set('Authorization', bearer(user.access))
        .send({ email: `  New.Address.${user.id}@Example.ORG ` })
        .expect(200);
      const email = `new.address.${user.id}@example.org`;
      expect(res.body).toEqual({
        id: user.id,
        username: user.username,
        email,
        is_social_only: false,
        is_staff: false,
        contributor_agreement_version: null,
        notifications: { email: true, push: true },
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
      const me = await request(t.http)
        .get(api('me'))
        .set('Authorization', bearer(user.access))
        .expect(200);
      expect(me.body.email).toBe(email);
      await loginUser(t.http, email.toUpperCase(), user.password);
    });

    it.each([['not-an-email'], ['ab'], [''], [`${'x'.repeat(250)}@example.org`]])(
      '400 Provide a valid email address. for %j',
      async (email) => {
        const user = await registerUser(t.http);
        const res = await request(t.http)
          .patch(api('me/email'))
          .set('Authorization', bearer(user.access))
          .send({ email })
          .expect(400);
        expect(res.body).toEqual(error('Provide a valid email address.'));
      },
    );

    it('400 This is already your current email address. (case-insensitive)', async () => {
      const user = await registerUser(t.http);
      const res = await request(t.http)
        .patch(api('me/email'))
        .set('Authorization', bearer(user.access))
        .send({ email: ` ${user.email.toUpperCase()} ` })
        .expect(400);
      expect(res.body).toEqual(error('This is already your current email address.'));
    });

    it('400 Email already exists. (case-insensitive)', async () => {
      const user = await registerUser(t.http);
      const other = await registerUser(t.http);
      const res = await request(t.http)
        .patch(api('me/email'))
        .set('Authorization', bearer(user.access))
        .send({ email: other.email.toUpperCase() })
        .expect(400);
      expect(res.body).toEqual(error('Email already exists.'));
    });

    it('401 Unauthorized without a token', async () => {
      const res = await request(t.http)
        .patch(api('me/email'))
        .send({ email: 'someone@example.org' })
        .expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('422 without an email field', async () => {
      const user = await registerUser(t.http);
      const res = await request(t.http)
        .patch(api('me/email'))
        .set('Authorization', bearer(user.access))
        .send({})
        .expect(422);
      expect(res.body.details.errors[0].loc).toEqual(['body', 'email']);
    });
  });

  describe('PUT /auth/me/password', () => {
    const change = (access: string, body: Record<string, unknown>) =>
      request(t.http).put(api('me/password')).set('Authorization', bearer(access)).send(body);

    it('200 Password changed successfully.; the new password logs in, the old one no longer', async () => {
      const user = await registerUser(t.http);
      const res = await change(user.access, {
        current_password: user.password,
        new_password: 'Amber-Harbour-5521',
        new_password_confirm: 'Amber-Harbour-5521',
      }).expect(200);
      expect(res.body).toEqual({ message: 'Password changed successfully.', details: null });
      await loginUser(t.http, user.username, 'Amber-Harbour-5521');
      const old = await request(t.http)
        .post(api('login'))
        .send({ username: user.username, password: user.password })
        .expect(401);
      expect(old.body).toEqual(error('Invalid credentials.'));
    });

    it('revokes every other session; the caller’s own session keeps working', async () => {
      const user = await registerUser(t.http);
      const other = await loginUser(t.http, user.username, user.password);
      const third = await loginUser(t.http, user.email, user.password);
      await change(user.access, {
        current_password: user.password,
        new_password: 'Amber-Harbour-5521',
        new_password_confirm: 'Amber-Harbour-5521',
      }).expect(200);

      for (const session of [other, third]) {
        await expectSessionRefused(session);
      }
      await request(t.http).get(api('me')).set('Authorization', bearer(user.access)).expect(200);
      const own = await request(t.http)
        .post(api('refresh'))
        .send({ refresh: user.refresh })
        .expect(200);
      await request(t.http)
        .get(api('me'))
        .set('Authorization', bearer(own.body.access))
        .expect(200);
    });

    it('400 Current password is incorrect.', async () => {
      const user = await registerUser(t.http);
      const res = await change(user.access, {
        current_password: 'Not-My-Password-1',
        new_password: 'Amber-Harbour-5521',
        new_password_confirm: 'Amber-Harbour-5521',
      }).expect(400);
      expect(res.body).toEqual(error('Current password is incorrect.'));
    });

    it('400 New passwords do not match.', async () => {
      const user = await registerUser(t.http);
      const res = await change(user.access, {
        current_password: user.password,
        new_password: 'Amber-Harbour-5521',
        new_password_confirm: 'Amber-Harbour-5522',
      }).expect(400);
      expect(res.body).toEqual(error('New passwords do not match.'));
    });

    it.each([
      ['tiny', 'This password is too short. It must contain at least 8 characters.'],
      ['iloveyou', 'This password is too common.'],
      ['80417263951', 'This password is entirely numeric.'],
    ])('400 with the policy message for %j', async (password, message) => {
      const user = await registerUser(t.http);
      const res = await change(user.access, {
        current_password: user.password,
        new_password: password,
        new_password_confirm: password,
      }).expect(400);
      expect(res.body).toEqual(error(message));
    });

    it('400 when the new password is too similar to the username or the email', async () => {
      const user = await registerUser(t.http, {
        username: 'theodora_featherstone',
        email: 'moonlit.cartography@example.org',
      });
      const byName = await change(user.access, {
        current_password: user.password,
        new_password: 'Theodora_Featherstone9',
        new_password_confirm: 'Theodora_Featherstone9',
      }).expect(400);
      expect(byName.body).toEqual(error('The password is too similar to the username.'));
      const byEmail = await change(user.access, {
        current_password: user.password,
        new_password: 'Moonlit.Cartography',
        new_password_confirm: 'Moonlit.Cartography',
      }).expect(400);
      expect(byEmail.body).toEqual(error('The password is too similar to the email.'));
    });

    it('401 Unauthorized without a token', async () => {
      const res = await request(t.http)
        .put(api('me/password'))
        .send({ current_password: 'a', new_password: 'b', new_password_confirm: 'b' })
        .expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('422 for missing fields', async () => {
      const user = await registerUser(t.http);
      const res = await change(user.access, { current_password: user.password }).expect(422);
      const locs = res.body.details.errors.map((e: { loc: unknown[] }) => e.loc);
      expect(locs).toEqual(
        expect.arrayContaining([
          ['body', 'new_password'],
          ['body', 'new_password_confirm'],
        ]),
      );
    });
  });

  describe('DELETE /auth/me', () => {
    const remove = (access: string, body?: Record<string, unknown>) => {
      const req = request(t.http).delete(api('me')).set('Authorization', bearer(access));
      return body ? req.send(body) : req;
    };

    it('400 Password is required. for an account with a password (missing or empty)', async () => {
      const user = await registerUser(t.http);
      for (const body of [undefined, {}, { password: '' }, { confirm_text: 'DELETE' }]) {
        const res = await remove(user.access, body).expect(400);
        expect(res.body).toEqual(error('Password is required.'));
      }
    });

    it('400 Incorrect password.', async () => {
      const user = await registerUser(t.http);
      const res = await remove(user.access, { password: 'Not-My-Password-1' }).expect(400);
      expect(res.body).toEqual(error('Incorrect password.'));
    });

    it('401 Unauthorized without a token', async () => {
      const res = await request(t.http)
        .delete(api('me'))
        .send({ password: TEST_PASSWORD })
        .expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('422 for an ill-typed password', async () => {
      const user = await registerUser(t.http);
      const res = await remove(user.access, { password: 12345678 }).expect(422);
      expect(res.body.details.errors[0].loc).toEqual(['body', 'password']);
    });

    it('200 Account deleted successfully.; every token of the user is then refused', async () => {
      const user = await registerUser(t.http);
      const other = await loginUser(t.http, user.username, user.password);
      const res = await remove(user.access, { password: user.password }).expect(200);
      expect(res.body).toEqual({ message: 'Account deleted successfully.', details: null });

      for (const session of [user, other]) {
        await expectSessionRefused(session);
      }
      const login = await request(t.http)
        .post(api('login'))
        .send({ username: user.username, password: user.password })
        .expect(401);
      expect(login.body).toEqual(error('Invalid credentials.'));
    });

    it('removes the user with its sessions and devices; the username and email are free again', async () => {
      const user = await registerUser(t.http);
      await request(t.http)
        .post(api('devices'))
        .set('Authorization', bearer(user.access))
        .send({ token: `device-${user.id}`, environment: 'production' })
        .expect(201);
      await remove(user.access, { password: user.password }).expect(200);
      expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1', [user.id])).toBe(0);
      expect(
        await count('SELECT count(*)::int AS n FROM refresh_sessions WHERE user_id = $1', [
          user.id,
        ]),
      ).toBe(0);
      expect(
        await count('SELECT count(*)::int AS n FROM device_tokens WHERE user_id = $1', [user.id]),
      ).toBe(0);
      await registerUser(t.http, { username: user.username, email: user.email });
    });
  });
});
