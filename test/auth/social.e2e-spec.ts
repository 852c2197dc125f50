import type { JWTPayload } from 'jose';
import request from 'supertest';
import { bearer, deactivateUser, loginUser, registerUser } from '../support/auth.js';
import { describeWithRedis, type TestApp, itWithDatabaseServer } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { useTestSuite } from '../support/suite.js';
import { countRows, queryRows, type TestDatabase } from '../support/database.js';
import {
  closedPortUrl,
  startFakeJwks,
  type FakeJwks,
  type IdentityTokenOptions,
} from '../support/fake-jwks.js';

const INVALID_TOKEN = { message: 'Invalid identity token.', details: null };
const APPLE_AUD = 'com.example.bookcase';
const GOOGLE_AUD = 'ios-client.apps.googleusercontent.com';

let seq = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${(seq += 1)}`;

interface Providers {
  apple: FakeJwks;
  google: FakeJwks;
}

function socialEnv(providers: Providers): Record<string, string> {
  return {
    APPLE_CLIENT_IDS: APPLE_AUD,
    APPLE_JWKS_URL: providers.apple.url,
    GOOGLE_CLIENT_IDS: `web-client.apps.googleusercontent.com,${GOOGLE_AUD}`,
    GOOGLE_JWKS_URL: providers.google.url,
  };
}

/** Apple id tokens carry no jti (the replay guard keys them by the token itself); each sign-in has its nonce. */
function appleToken(providers: Providers, claims: JWTPayload = {}, options?: IdentityTokenOptions) {
  return providers.apple.sign(
    {
      iss: 'https://appleid.apple.com',
      aud: APPLE_AUD,
      sub: unique('apple'),
      nonce: unique('nonce'),
      ...claims,
    },
    options,
  );
}

function googleToken(
  providers: Providers,
  claims: JWTPayload = {},
  options?: IdentityTokenOptions,
) {
  return providers.google.sign(
    {
      iss: 'https://accounts.google.com',
      aud: GOOGLE_AUD,
      sub: unique('google'),
      jti: unique('jti'),
      ...claims,
    },
    options,
  );
}

describe('POST /auth/social', () => {
  let db: TestDatabase;
  let t: TestApp;
  let providers: Providers;
  const clock = new FakeClock();

  const signIn = (body: Record<string, unknown>) =>
    request(t.http).post('/api/v1/auth/social').send(body);
  const me = async (access: string) =>
    (await request(t.http).get('/api/v1/auth/me').set('Authorization', bearer(access)).expect(200))
      .body;
  const namesOf = async (id: number) =>
    (await queryRows(db.url, 'SELECT first_name, last_name FROM users WHERE id = $1', [id]))[0];

  useTestSuite(
    {
      clock,
      fakes: async () => ({
        apple: await startFakeJwks(() => clock.now()),
        google: await startFakeJwks(() => clock.now()),
      }),
      env: (fakes) => ({ RATE_LIMIT_ENABLED: 'false', ...socialEnv(fakes) }),
    },
    (s) => ({ db, t, fakes: providers } = s),
  );

  describe('request checks', () => {
    it.each([['facebook'], ['Apple'], [''], ['google ']])(
      '400 Unsupported provider. for %j',
      async (provider) => {
        const res = await signIn({ provider, id_token: await appleToken(providers) }).expect(400);
        expect(res.body).toEqual({
          message: "Unsupported provider. Use 'apple' or 'google'.",
          details: null,
        });
      },
    );

    it('422 for a missing or too short id_token, or an overlong name', async () => {
      for (const body of [
        { provider: 'apple' },
        { provider: 'apple', id_token: 'x'.repeat(19) },
        { provider: 'apple', id_token: 'x'.repeat(40), first_name: 'n'.repeat(151) },
        { id_token: 'x'.repeat(40) },
      ]) {
        const res = await signIn(body).expect(422);
        expect(res.body.message).toBe('Validation error.');
      }
    });

    it('ignores an Authorization header', async () => {
      const res = await signIn({ provider: 'apple', id_token: await appleToken(providers) }).set(
        'Authorization',
        'Bearer x',
      );
      expect(res.status).toBe(200);
    });
  });

  describe('accounts', () => {
    it('creates an account on first sign-in: 200 {access, refresh}, social-only, names stored', async () => {
      const email = `${unique('jane')}@privaterelay.example`;
      const res = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { email, email_verified: 'true' }),
        first_name: 'Jane',
        last_name: 'Doe',
      }).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['access', 'refresh']);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const user = await me(res.body.access);
      expect(user).toEqual({
        id: expect.any(Number),
        username: 'jane.doe',
        email,
        is_social_only: true,
        is_staff: false,
        contributor_agreement_version: null,
        notifications: { email: true, push: true },
      });
      expect(await namesOf(user.id)).toEqual({ first_name: 'Jane', last_name: 'Doe' });
      const refreshed = await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refresh: res.body.refresh })
        .expect(200);
      expect((await me(refreshed.body.access)).id).toBe(user.id);
    });

    it('returns the same user on later sign-ins, keeping the names of the first', async () => {
      const sub = unique('apple');
      const first = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
        first_name: 'Ada',
        last_name: 'Byron',
      }).expect(200);
      const id = (await me(first.body.access)).id;
      const second = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
        first_name: 'Other',
        last_name: 'Name',
      }).expect(200);
      expect((await me(second.body.access)).id).toBe(id);
      const third = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
      }).expect(200);
      expect((await me(third.body.access)).id).toBe(id);
      expect(await namesOf(id)).toEqual({ first_name: 'Ada', last_name: 'Byron' });
    });

    it('makes derived usernames unique with a numeric suffix', async () => {
      const usernames: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const res = await signIn({
          provider: 'apple',
          id_token: await appleToken(providers),
          first_name: 'Émile',
          last_name: 'Zola',
        }).expect(200);
        usernames.push((await me(res.body.access)).username);
      }
      expect(usernames).toEqual(['emile.zola', 'emile.zola2', 'emile.zola3']);
    });

    it('derives the username from the token’s names, else the email local part, else the provider', async () => {
      const named = await signIn({
        provider: 'google',
        id_token: await googleToken(providers, { given_name: 'Grace', family_name: 'Hopper' }),
      }).expect(200);
      expect((await me(named.body.access)).username).toBe('grace.hopper');
      expect(await namesOf((await me(named.body.access)).id)).toEqual({
        first_name: 'Grace',
        last_name: 'Hopper',
      });

      const local = await signIn({
        provider: 'google',
        id_token: await googleToken(providers, {
          email: 'Book.Lover+shelf@mail.example',
          email_verified: true,
        }),
      }).expect(200);
      expect(await me(local.body.access)).toMatchObject({
        username: 'book.lover',
        email: 'book.lover+shelf@mail.example',
      });

      const bare = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers),
      }).expect(200);
      expect((await me(bare.body.access)).username).toMatch(/^appleuser\d*$/);
    });

    it('links an existing account with the same email when the provider verified it (true)', async () => {
      const local = await registerUser(t.http);
      const res = await signIn({
        provider: 'google',
        id_token: await googleToken(providers, {
          email: local.email.toUpperCase(),
          email_verified: true,
        }),
      }).expect(200);
      expect(await me(res.body.access)).toEqual({
        id: local.id,
        username: local.username,
        email: local.email,
        is_social_only: false,
        is_staff: false,
        contributor_agreement_version: null,
        notifications: { email: true, push: true },
      });
      await loginUser(t.http, local.username, local.password);
    });

    it('links on email_verified "true" (Apple sends a string) and fills blank names', async () => {
      const local = await registerUser(t.http);
      const sub = unique('apple');
      const res = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub, email: local.email, email_verified: 'true' }),
        first_name: 'Linked',
        last_name: 'Reader',
      }).expect(200);
      expect((await me(res.body.access)).id).toBe(local.id);
      expect(await namesOf(local.id)).toEqual({ first_name: 'Linked', last_name: 'Reader' });
      const again = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
      }).expect(200);
      expect((await me(again.body.access)).id).toBe(local.id);
    });

    it.each([[false], ['false'], [undefined], ['yes']])(
      'does not link when email_verified is %j: a new account without that email',
      async (emailVerified) => {
        const local = await registerUser(t.http);
        const claims: JWTPayload = { email: local.email };
        if (emailVerified !== undefined) claims.email_verified = emailVerified;
        const res = await signIn({
          provider: 'google',
          id_token: await googleToken(providers, claims),
        }).expect(200);
        const user = await me(res.body.access);
        expect(user.id).not.toBe(local.id);
        expect(user).toMatchObject({ email: '', is_social_only: true });
        expect(user.username).not.toContain(local.username);
        await loginUser(t.http, local.username, local.password);
      },
    );

    it('never stores an unverified email: its owner can still register it', async () => {
      const email = `${unique('claimed')}@example.org`;
      await signIn({
        provider: 'google',
        id_token: await googleToken(providers, { email, email_verified: false }),
      }).expect(200);
      const owner = await registerUser(t.http, { email });
      expect(owner.email).toBe(email);
    });

    itWithDatabaseServer(
      'gives concurrent first sign-ins of one identity a single account',
      async () => {
        const sub = unique('google');
        const tokens = await Promise.all(
          Array.from({ length: 5 }, () => googleToken(providers, { sub, given_name: 'Race' })),
        );
        const responses = await Promise.all(
          tokens.map((id_token) => signIn({ provider: 'google', id_token })),
        );
        expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
        const ids = new Set(
          await Promise.all(responses.map(async (res) => (await me(res.body.access)).id)),
        );
        expect(ids.size).toBe(1);
      },
    );

    it('refuses an inactive account with 400 Invalid identity token.', async () => {
      const sub = unique('apple');
      const first = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
      }).expect(200);
      const { id } = await me(first.body.access);
      await deactivateUser(db.url, id);
      const res = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
      }).expect(400);
      expect(res.body).toEqual(INVALID_TOKEN);
    });
  });

  describe('token verification: every failure is 400 Invalid identity token.', () => {
    const expectInvalid = async (provider: string, idToken: string | Promise<string>) => {
      const res = await signIn({ provider, id_token: await idToken }).expect(400);
      expect(res.body).toEqual(INVALID_TOKEN);
    };

    it('bad signature (signed by a key the JWKS does not hold, same kid)', async () => {
      await expectInvalid('apple', appleToken(providers, {}, { foreignKey: true }));
    });

    it('wrong audience', async () => {
      await expectInvalid('apple', appleToken(providers, { aud: 'com.example.someone-else' }));
      await expectInvalid('google', googleToken(providers, { aud: APPLE_AUD }));
    });

    it('wrong issuer', async () => {
      await expectInvalid('apple', appleToken(providers, { iss: 'https://evil.example' }));
      await expectInvalid(
        'google',
        googleToken(providers, { iss: 'https://accounts.google.com.evil.example' }),
      );
    });

    it('accepts Google’s issuer without the scheme', async () => {
      await signIn({
        provider: 'google',
        id_token: await googleToken(providers, { iss: 'accounts.google.com' }),
      }).expect(200);
    });

    it('expired beyond the 60 s leeway (but accepted within it)', async () => {
      const now = Math.floor(clock.now() / 1000);
      await expectInvalid('apple', appleToken(providers, {}, { iat: now - 3600, exp: now - 61 }));
      await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, {}, { iat: now - 3600, exp: now - 30 }),
      }).expect(200);
    });

    it('no kid, or a kid the JWKS does not have', async () => {
      await expectInvalid('apple', appleToken(providers, {}, { kid: null }));
      await expectInvalid('apple', appleToken(providers, {}, { kid: 'unknown-kid' }));
    });

    it('a token of the other provider', async () => {
      await expectInvalid('google', appleToken(providers));
      await expectInvalid('apple', googleToken(providers));
    });

    it('no subject', async () => {
      await expectInvalid(
        'apple',
        providers.apple.sign({ iss: 'https://appleid.apple.com', aud: APPLE_AUD }),
      );
    });

    it('not a JWT at all', async () => {
      await expectInvalid('apple', 'definitely-not-a-jwt-but-long-enough');
      await expectInvalid('google', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLWJ5dGVz');
    });

    it('a replayed token: the same jti is refused the second time', async () => {
      const jti = unique('jti');
      const sub = unique('google');
      await signIn({
        provider: 'google',
        id_token: await googleToken(providers, { sub, jti }),
      }).expect(200);
      await expectInvalid('google', googleToken(providers, { sub, jti }));
    });

    it('a replayed token without jti: the very same token is refused the second time', async () => {
      const token = await appleToken(providers);
      await signIn({ provider: 'apple', id_token: token }).expect(200);
      await expectInvalid('apple', token);
    });

    it('records used tokens in the database when no Redis is configured', async () => {
      const count = await countRows(db.url, 'SELECT count(*)::int AS n FROM used_identity_tokens');
      expect(count).toBeGreaterThan(0);
    });
  });

  describe('social-only accounts', () => {
    const socialUser = async () => {
      const res = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, {
          email: `${unique('s')}@relay.example`,
          email_verified: true,
        }),
      }).expect(200);
      return { ...(await me(res.body.access)), access: res.body.access as string };
    };

    it('PATCH /auth/me/email 403 Social login accounts cannot change their email address.', async () => {
      const user = await socialUser();
      const res = await request(t.http)
        .patch('/api/v1/auth/me/email')
        .set('Authorization', bearer(user.access))
        .send({ email: `${unique('new')}@example.org` })
        .expect(403);
      expect(res.body).toEqual({
        message: 'Social login accounts cannot change their email address.',
        details: null,
      });
    });

    it('PUT /auth/me/password 403 Social login accounts cannot change their password.', async () => {
      const user = await socialUser();
      const res = await request(t.http)
        .put('/api/v1/auth/me/password')
        .set('Authorization', bearer(user.access))
        .send({
          current_password: 'x',
          new_password: 'Amber-Harbour-5521',
          new_password_confirm: 'Amber-Harbour-5521',
        })
        .expect(403);
      expect(res.body).toEqual({
        message: 'Social login accounts cannot change their password.',
        details: null,
      });
    });

    it('cannot log in with a password', async () => {
      const user = await socialUser();
      const res = await request(t.http)
        .post('/api/v1/auth/login')
        .send({ username: user.username, password: '' })
        .expect(401);
      expect(res.body).toEqual({ message: 'Invalid credentials.', details: null });
    });

    it("DELETE /auth/me 400 Send confirm_text set to 'DELETE' … unless confirm_text is exactly DELETE", async () => {
      const user = await socialUser();
      for (const body of [
        {},
        { confirm_text: 'delete' },
        { confirm_text: ' DELETE ' },
        { password: 'anything' },
      ]) {
        const res = await request(t.http)
          .delete('/api/v1/auth/me')
          .set('Authorization', bearer(user.access))
          .send(body)
          .expect(400);
        expect(res.body).toEqual({
          message: "Send confirm_text set to 'DELETE' to delete your account.",
          details: null,
        });
      }
    });

    it('DELETE /auth/me with confirm_text DELETE removes the account and its identity', async () => {
      const sub = unique('apple');
      const res = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
      }).expect(200);
      const { id } = await me(res.body.access);
      const deleted = await request(t.http)
        .delete('/api/v1/auth/me')
        .set('Authorization', bearer(res.body.access))
        .send({ confirm_text: 'DELETE' })
        .expect(200);
      expect(deleted.body).toEqual({ message: 'Account deleted successfully.', details: null });
      const identities = await countRows(
        db.url,
        'SELECT count(*)::int AS n FROM social_identities WHERE user_id = $1',
        [id],
      );
      expect(identities).toBe(0);
      await request(t.http)
        .get('/api/v1/auth/me')
        .set('Authorization', bearer(res.body.access))
        .expect(401);
      await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refresh: res.body.refresh })
        .expect(401);
      const again = await signIn({
        provider: 'apple',
        id_token: await appleToken(providers, { sub }),
      }).expect(200);
      expect((await me(again.body.access)).id).not.toBe(id);
    });
  });
});

describe('POST /auth/social with an unreachable JWKS or an unconfigured provider', () => {
  let t: TestApp;
  let apple: FakeJwks;
  const clock = new FakeClock();

  useTestSuite(
    {
      clock,
      fakes: async () => ({ apple: await startFakeJwks(() => clock.now()) }),
      env: async () => ({
        RATE_LIMIT_ENABLED: 'false',
        APPLE_CLIENT_IDS: APPLE_AUD,
        APPLE_JWKS_URL: await closedPortUrl(),
      }),
    },
    (s) =>
      ({
        t,
        fakes: { apple },
      } = s),
  );

  it('400 Invalid identity token. when the JWKS cannot be fetched', async () => {
    const idToken = await apple.sign({
      iss: 'https://appleid.apple.com',
      aud: APPLE_AUD,
      sub: unique('apple'),
    });
    const res = await request(t.http)
      .post('/api/v1/auth/social')
      .send({ provider: 'apple', id_token: idToken })
      .expect(400);
    expect(res.body).toEqual(INVALID_TOKEN);
  });

  it('400 Invalid identity token. for a provider without client ids', async () => {
    const idToken = await apple.sign({
      iss: 'https://accounts.google.com',
      aud: GOOGLE_AUD,
      sub: unique('google'),
    });
    const res = await request(t.http)
      .post('/api/v1/auth/social')
      .send({ provider: 'google', id_token: idToken })
      .expect(400);
    expect(res.body).toEqual(INVALID_TOKEN);
  });
});

describeWithRedis('POST /auth/social replay guard in Redis', () => {
  let db: TestDatabase;
  let t: TestApp;
  let providers: Providers;
  const clock = new FakeClock();

  useTestSuite(
    {
      clock,
      redis: true,
      fakes: async () => ({
        apple: await startFakeJwks(() => clock.now()),
        google: await startFakeJwks(() => clock.now()),
      }),
      env: (fakes) => ({ RATE_LIMIT_ENABLED: 'false', ...socialEnv(fakes) }),
    },
    (s) => ({ db, t, fakes: providers } = s),
  );

  it('refuses a replayed jti across requests: the database records the claim, Redis refuses the replay first', async () => {
    const token = await googleToken(providers);
    await request(t.http)
      .post('/api/v1/auth/social')
      .send({ provider: 'google', id_token: token })
      .expect(200);
    // The database is the record of truth (issue 14): the claim is there, written through to Redis.
    const count = () => countRows(db.url, 'SELECT count(*)::int AS n FROM used_identity_tokens');
    expect(await count()).toBe(1);
    // Redis alone refuses the replay (the table row is gone, Redis still knows the key).
    await queryRows(db.url, 'DELETE FROM used_identity_tokens');
    const res = await request(t.http)
      .post('/api/v1/auth/social')
      .send({ provider: 'google', id_token: token })
      .expect(400);
    expect(res.body).toEqual(INVALID_TOKEN);
    expect(await count()).toBe(0);
  });
});
