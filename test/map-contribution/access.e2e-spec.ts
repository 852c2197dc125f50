/**
 * Every staff route of decisions §6 under /api/v1/admin/map-contributions: 401 anonymous (also with a bad token),
 * 403 `Staff access required.` for a signed-in user, 200 for staff — and a refused caller reaches neither the
 * database state nor the map server.
 */
import request from 'supertest';
import { registerUser, type RegisteredUser } from '../support/auth.js';
import {
  BASE,
  NOT_FOUND,
  STAFF_ONLY,
  UNAUTHORIZED,
  checkPasses,
  contributionRow,
  eventRows,
  sql,
  submitLibrary,
  type SubmittedLibrary,
  mapSuite,
} from './helpers.js';

describe('map contribution staff routes: access', () => {
  const { fake, db, t, staff, owner } = mapSuite({ resetFake: true });
  let user: RegisteredUser;
  let lib: SubmittedLibrary;

  beforeAll(async () => {
    user = await registerUser(t.http);
    lib = await submitLibrary(t.http, owner, staff);
  });

  type Route = [method: 'get' | 'post', path: () => string, body?: object];
  const routes: Record<string, Route> = {
    'GET /': ['get', () => '/'],
    'GET /{slug}': ['get', () => `/${lib.slug}`],
    'POST /{slug}/check': ['post', () => `/${lib.slug}/check`],
    'POST /{slug}/resolve': [
      'post',
      () => `/${lib.slug}/resolve`,
      { outcome: 'same_feature', element_type: 'node', element_id: 42, reason: 'seen on site' },
    ],
    'GET /{slug}/preview': ['get', () => `/${lib.slug}/preview?verified_name=true`],
    'POST /{slug}/confirm': ['post', () => `/${lib.slug}/confirm`, { verified_name: true }],
    'POST /{slug}/reconcile': ['post', () => `/${lib.slug}/reconcile`],
    'POST /{slug}/withdraw': ['post', () => `/${lib.slug}/withdraw`],
  };

  const send = (route: Route, token: string | null) => {
    const [method, path, body] = route;
    let req = request(t.http)[method](`${BASE}${path()}`);
    if (token) req = req.set('Authorization', `Bearer ${token}`);
    return body ? req.send(body) : req;
  };

  it.each(Object.keys(routes))(
    '%s: 401 without or with an invalid token, 403 for a user; nothing happens',
    async (name) => {
      const route = routes[name];
      const anonymous = await send(route, null);
      expect([anonymous.status, anonymous.body]).toEqual([401, UNAUTHORIZED]);
      const forged = await send(route, 'not-a-jwt');
      expect([forged.status, forged.body]).toEqual([401, UNAUTHORIZED]);
      const asUser = await send(route, user.access);
      expect([asUser.status, asUser.body]).toEqual([403, STAFF_ONLY]);
      expect(asUser.headers['cache-control']).toBe('private, no-store');

      expect(fake.requests).toEqual([]);
      expect(await contributionRow(db.url, lib.id)).toBeUndefined();
      const row = await sql(
        db.url,
        'SELECT mapdb_submission_allowed FROM libraries WHERE id = $1',
        [lib.id],
      );
      expect(row.rows[0].mapdb_submission_allowed).toBe(true);
    },
  );

  it('answers 200 to staff on every route (each driven into the state it acts on)', async () => {
    const get = (path: string) => send(['get', () => path], staff.access);
    const post = (path: string, body?: object) => send(['post', () => path, body], staff.access);

    const list = await get('/');
    expect(list.status).toBe(200);
    expect(list.headers['cache-control']).toBe('private, no-store');
    expect(list.body.items.map((item: { library: { slug: string } }) => item.library.slug)).toEqual(
      [lib.slug],
    );
    expect((await get(`/${lib.slug}`)).status).toBe(200);

    // resolve needs a possible duplicate: a bookcase right at the library.
    fake.seedQuery({
      type: 'node',
      id: 77,
      lat: lib.lat,
      lon: lib.lng,
      tags: { amenity: 'public_bookcase' },
    });
    const check = await post(`/${lib.slug}/check`);
    expect([check.status, check.body.status]).toEqual([200, 'possible_duplicate']);
    const resolve = await post(`/${lib.slug}/resolve`, {
      outcome: 'different_feature',
      element_type: 'node',
      element_id: 77,
      reason: 'The node is the school bookshelf across the street.',
    });
    expect([resolve.status, resolve.body.status]).toEqual([200, 'possible_duplicate']);
    fake.clearQuery();
    await checkPasses(t.http, staff, lib.slug);

    const preview = await get(`/${lib.slug}/preview?verified_name=true`);
    expect([preview.status, preview.body.eligible]).toEqual([200, true]);
    const confirm = await post(`/${lib.slug}/confirm`, { verified_name: true });
    expect([confirm.status, confirm.body.status]).toEqual([200, 'contributed']);

    // reconcile needs a failed record: an ambiguous changeset create on a second library.
    const other = await submitLibrary(t.http, owner, staff);
    fake.script('changeset.create', { kind: 'write_then_drop' });
    const failed = await post(`/${other.slug}/confirm`, {});
    expect([failed.status, failed.body.status]).toEqual([200, 'failed']);
    const reconcile = await post(`/${other.slug}/reconcile`);
    expect([reconcile.status, reconcile.body.status]).toEqual([200, 'unchecked']);

    const withdraw = await post(`/${other.slug}/withdraw`);
    expect([withdraw.status, withdraw.body.library.mapdb_submission_allowed]).toEqual([200, false]);
    expect((await eventRows(db.url, other.id)).at(-1)?.event_type).toBe('permission_withdrawal');
  });

  it('answers 404 to staff for an unknown slug on every library route, touching nothing', async () => {
    for (const route of Object.values(routes).slice(1)) {
      const [method, path, body] = route;
      const missing: Route = [method, () => path().replace(lib.slug, 'no-such-library'), body];
      const res = await send(missing, staff.access);
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    }
    expect(fake.writeRequests).toEqual([]);
  });
});
