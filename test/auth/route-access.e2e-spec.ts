/**
 * Access to every route, from the app's own route metadata (test/support/routes.ts) rather than a hand-kept list:
 * each route that is neither @Public nor @OptionalAuth answers 401 `Unauthorized` without a token and with a forged one, each @StaffOnly
 * route answers 403 `Staff access required.` to a signed-in user, every console route sends an anonymous caller to
 * the sign-in form, and none of those refused requests changes a row.
 * A route added later is covered without being listed here.
 */
import request from 'supertest';
import { bearer, registerUser, type RegisteredUser } from '../support/auth.js';
import { withClient } from '../support/database.js';
import { STAFF_REQUIRED, UNAUTHORIZED } from '../support/errors.js';
import { appRoutes, sampleUrl, type AppRoute } from '../support/routes.js';
import { useTestSuite } from '../support/suite.js';

/** One fingerprint of every row of every table: equal before and after means nothing was written. */
async function databaseFingerprint(url: string): Promise<Record<string, string>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'spatial_ref_sys' ORDER BY 1",
    );
    const prints: Record<string, string> = {};
    for (const { tablename } of rows) {
      const result = await client.query<{ print: string | null }>(
        `SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) AS print FROM "${tablename}" t`,
      );
      prints[tablename] = result.rows[0].print ?? 'empty';
    }
    return prints;
  });
}

describe('route access, generated from the route metadata', () => {
  const suite = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
  let routes: AppRoute[];
  let user: RegisteredUser;

  beforeAll(async () => {
    routes = appRoutes(suite.t.app);
    user = await registerUser(suite.http);
  });

  const send = (route: AppRoute, token: string | null) => {
    let req = request(suite.http)[route.method](sampleUrl(route.pattern));
    if (token) req = req.set('Authorization', bearer(token));
    return req;
  };

  it('finds every controller route, including the ones hand-kept lists missed', () => {
    const names = routes.map((route) => route.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'POST /api/v1/admin/map-contributions/batch-confirm',
        'PATCH /api/v1/libraries/moderation/{slug}',
        'GET /api/v1/auth/me',
        'DELETE /api/v1/libraries/{slug}/favourite',
      ]),
    );
    expect(
      routes.filter((route) => !route.isPublic && !route.optionalAuth).length,
    ).toBeGreaterThanOrEqual(30);
    expect(routes.filter((route) => route.staffOnly).length).toBeGreaterThanOrEqual(15);
    // A staff-only route is never also public (the staff guard would see no user).
    expect(routes.filter((route) => route.staffOnly && route.isPublic)).toEqual([]);
  });

  it('answers 401 on every protected route without a token or with a forged one, 403 on every staff route for a user, and writes nothing', async () => {
    const before = await databaseFingerprint(suite.db.url);
    const wrong: string[] = [];
    for (const route of routes.filter(
      (candidate) => !candidate.isPublic && !candidate.optionalAuth,
    )) {
      for (const token of [null, 'not-a-jwt']) {
        const res = await send(route, token);
        if (res.status !== 401 || JSON.stringify(res.body) !== JSON.stringify(UNAUTHORIZED))
          wrong.push(
            `${route.name} (${token ?? 'no token'}): ${res.status} ${JSON.stringify(res.body)}`,
          );
        if (res.headers['cache-control'] !== 'private, no-store')
          wrong.push(`${route.name}: Cache-Control ${res.headers['cache-control']}`);
      }
      if (route.staffOnly) {
        const res = await send(route, user.access);
        if (res.status !== 403 || JSON.stringify(res.body) !== JSON.stringify(STAFF_REQUIRED))
          wrong.push(`${route.name} (user): ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await databaseFingerprint(suite.db.url)).toEqual(before);
  });

  it('treats a forged token on every @OptionalAuth route as no token (never 401)', async () => {
    const optional = routes.filter((route) => route.optionalAuth);
    expect(optional.length).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const route of optional) {
      const anonymous = await send(route, null);
      const forged = await send(route, 'not-a-jwt');
      if (forged.status === 401 || forged.status !== anonymous.status)
        wrong.push(`${route.name}: ${anonymous.status} anonymous, ${forged.status} forged`);
    }
    expect(wrong).toEqual([]);
  });

  it('sends an anonymous caller of every console route (session guard) to the sign-in form, writing nothing', async () => {
    const consoleRoutes = routes.filter((route) => route.guards.includes('ConsoleSessionGuard'));
    expect(consoleRoutes.map((route) => route.name)).toEqual(
      expect.arrayContaining(['GET /admin', 'GET /admin/contributions/{slug}']),
    );
    const before = await databaseFingerprint(suite.db.url);
    const wrong: string[] = [];
    for (const route of consoleRoutes) {
      const res = await send(route, null);
      const login = route.method === 'get' ? /^\/admin\/login\?next=/ : /^\/admin\/login$/;
      if (res.status !== 303 || !login.test(String(res.headers.location)))
        wrong.push(`${route.name}: ${res.status} ${res.headers.location}`);
    }
    expect(wrong).toEqual([]);
    expect(await databaseFingerprint(suite.db.url)).toEqual(before);
  });
});
