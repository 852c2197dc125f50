/**
 * The contributor agreement fields of POST /auth/register and POST /auth/social (issue 21): stored per user with
 * time, version and channel, shown by GET /auth/me, and mandatory for new accounts in required mode. Two apps on one
 * database: the agreement in force but optional, and required.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { bearer, TEST_PASSWORD } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { countRows, queryRows } from '../support/database.js';
import { startFakeJwks } from '../support/fake-jwks.js';
import { useTestSuite } from '../support/suite.js';

const CURRENT = '2026-06';
const GOOGLE_AUD = 'ios-client.apps.googleusercontent.com';
const TOGETHER = {
  message: 'Send contributor_agreement_version and contributor_agreement_accepted together.',
  details: null,
};
const REQUIRED = {
  message: `You must accept the contributor agreement (version ${CURRENT}) to create an account.`,
  details: { contributor_agreement_version: CURRENT },
};

let seq = 0;
const unique = (prefix: string) =>
  `${prefix}_${process.pid}_${(seq += 1)}_${randomBytes(2).toString('hex')}`;

describe('contributor agreement', () => {
  const clock = new FakeClock();
  /** The suite's app: the agreement optional. */
  const {
    db,
    t: optional,
    fakes: { google },
    startApp,
  } = useTestSuite({
    fakes: async () => ({ google: await startFakeJwks(() => clock.now()) }),
    clock,
    env: ({ google }) => ({
      RATE_LIMIT_ENABLED: 'false',
      GOOGLE_CLIENT_IDS: GOOGLE_AUD,
      GOOGLE_JWKS_URL: google.url,
      CONTRIBUTOR_AGREEMENT_VERSION: CURRENT,
    }),
  });
  let required: TestApp;

  const newAccount = () => {
    const username = unique('reader');
    return { username, email: `${username}@example.org`, password: TEST_PASSWORD };
  };
  const register = (t: TestApp, body: Record<string, unknown>) =>
    request(t.http).post('/api/v1/auth/register').send(body);
  const social = (t: TestApp, body: Record<string, unknown>) =>
    request(t.http)
      .post('/api/v1/auth/social')
      .send({ provider: 'google', ...body });
  const googleToken = (sub: string) =>
    google.sign({
      iss: 'https://accounts.google.com',
      aud: GOOGLE_AUD,
      sub,
      jti: unique('jti'),
      email: `${sub}@example.org`,
      email_verified: true,
    });
  const me = async (t: TestApp, access: string) =>
    (await request(t.http).get('/api/v1/auth/me').set('Authorization', bearer(access)).expect(200))
      .body as Record<string, unknown>;
  const acceptances = (username: string) =>
    queryRows(
      db.url,
      `SELECT a.version, a.channel, a.accepted_at FROM contributor_agreements a
         JOIN users u ON u.id = a.user_id WHERE u.username = $1 ORDER BY a.id`,
      [username],
    );
  const userCount = () => countRows(db.url, 'SELECT count(*)::int AS n FROM users');

  beforeAll(async () => {
    required = await startApp({
      env: (env) => ({ ...env, CONTRIBUTOR_AGREEMENT_REQUIRED: 'true' }),
    });
  });

  describe('optional (the default)', () => {
    it('registers clients that send neither field exactly as before, with no acceptance', async () => {
      const account = newAccount();
      const res = await register(optional, account).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['access', 'refresh']);
      expect((await me(optional, res.body.access)).contributor_agreement_version).toBeNull();
      expect(await acceptances(account.username)).toEqual([]);
    });

    it('stores an acceptance of the current version with its time, version and channel', async () => {
      const account = newAccount();
      const res = await register(optional, {
        ...account,
        contributor_agreement_version: CURRENT,
        contributor_agreement_accepted: true,
      }).expect(201);
      expect(await me(optional, res.body.access)).toMatchObject({
        username: account.username,
        contributor_agreement_version: CURRENT,
      });
      expect(await acceptances(account.username)).toEqual([
        { version: CURRENT, channel: 'api', accepted_at: clock.date() },
      ]);
    });

    it('stores nothing for accepted=false or a version that is not the current one', async () => {
      for (const extra of [
        { contributor_agreement_version: CURRENT, contributor_agreement_accepted: false },
        { contributor_agreement_version: '2025-01', contributor_agreement_accepted: true },
      ]) {
        const account = newAccount();
        const res = await register(optional, { ...account, ...extra }).expect(201);
        expect((await me(optional, res.body.access)).contributor_agreement_version).toBeNull();
        expect(await acceptances(account.username)).toEqual([]);
      }
    });

    it('400 when only one of the two fields is sent, and 422 for wrong types', async () => {
      const before = await userCount();
      for (const extra of [
        { contributor_agreement_version: CURRENT },
        { contributor_agreement_accepted: true },
      ]) {
        const res = await register(optional, { ...newAccount(), ...extra }).expect(400);
        expect(res.body).toEqual(TOGETHER);
      }
      for (const [extra, field] of [
        [
          { contributor_agreement_version: 5, contributor_agreement_accepted: true },
          'contributor_agreement_version',
        ],
        [
          { contributor_agreement_version: CURRENT, contributor_agreement_accepted: 'yes' },
          'contributor_agreement_accepted',
        ],
        [
          { contributor_agreement_version: '', contributor_agreement_accepted: true },
          'contributor_agreement_version',
        ],
      ] as const) {
        const res = await register(optional, { ...newAccount(), ...extra }).expect(422);
        const locs = res.body.details.errors.map((error: { loc: string[] }) => error.loc.join('.'));
        expect([...new Set(locs)]).toEqual([`body.${field}`]);
      }
      expect(await userCount()).toBe(before);
    });
  });

  describe('required (CONTRIBUTOR_AGREEMENT_REQUIRED=true)', () => {
    it('refuses a new account without an accepted current version, writing nothing', async () => {
      const before = await userCount();
      const missing = await register(required, newAccount()).expect(400);
      expect(missing.body).toEqual(REQUIRED);
      const declined = await register(required, {
        ...newAccount(),
        contributor_agreement_version: CURRENT,
        contributor_agreement_accepted: false,
      }).expect(400);
      expect(declined.body).toEqual(REQUIRED);
      const outdated = await register(required, {
        ...newAccount(),
        contributor_agreement_version: '2025-01',
        contributor_agreement_accepted: true,
      }).expect(400);
      expect(outdated.body).toEqual({
        message:
          "Contributor agreement version '2025-01' is not the current one ('2026-06'). Accept the current version to create an account.",
        details: { contributor_agreement_version: CURRENT },
      });
      expect(await userCount()).toBe(before);
    });

    it('registers with the current version accepted', async () => {
      const account = newAccount();
      const res = await register(required, {
        ...account,
        contributor_agreement_version: CURRENT,
        contributor_agreement_accepted: true,
      }).expect(201);
      expect((await me(required, res.body.access)).contributor_agreement_version).toBe(CURRENT);
    });

    it('applies to new social accounts, never to an existing account signing in again', async () => {
      const sub = unique('google');
      const refused = await social(required, { id_token: await googleToken(sub) }).expect(400);
      expect(refused.body).toEqual(REQUIRED);

      // Created while the agreement was optional, without accepting it.
      const created = await social(optional, { id_token: await googleToken(sub) }).expect(200);
      expect((await me(optional, created.body.access)).contributor_agreement_version).toBeNull();

      // Signing in again is never blocked; a valid acceptance sent with it is recorded.
      await social(required, { id_token: await googleToken(sub) }).expect(200);
      await social(required, {
        id_token: await googleToken(sub),
        contributor_agreement_version: '2025-01',
        contributor_agreement_accepted: true,
      }).expect(200);
      clock.advance(60_000);
      const accepted = await social(required, {
        id_token: await googleToken(sub),
        contributor_agreement_version: CURRENT,
        contributor_agreement_accepted: true,
      }).expect(200);
      expect((await me(required, accepted.body.access)).contributor_agreement_version).toBe(
        CURRENT,
      );

      const fresh = unique('google');
      const ok = await social(required, {
        id_token: await googleToken(fresh),
        contributor_agreement_version: CURRENT,
        contributor_agreement_accepted: true,
      }).expect(200);
      const user = await me(required, ok.body.access);
      expect(user.contributor_agreement_version).toBe(CURRENT);
      expect(await acceptances(user.username as string)).toEqual([
        { version: CURRENT, channel: 'api', accepted_at: clock.date() },
      ]);
    });

    it('400 before spending the identity token when only one field is sent', async () => {
      const token = await googleToken(unique('google'));
      const res = await social(required, {
        id_token: token,
        contributor_agreement_accepted: true,
      }).expect(400);
      expect(res.body).toEqual(TOGETHER);
      await social(required, {
        id_token: token,
        contributor_agreement_version: CURRENT,
        contributor_agreement_accepted: true,
      }).expect(200);
    });
  });
});
