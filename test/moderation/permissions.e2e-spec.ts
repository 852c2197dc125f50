/**
 * Every staff moderation route (decisions §5): 401 anonymous, 403 `Staff access required.` for a normal user
 * (with nothing changed), 200 for staff; staff status is read on every request.
 */
import { makeStaff, registerUser } from '../support/auth.js';
import {
  call,
  insertCommunityPhoto,
  insertReport,
  STAFF_REQUIRED,
  type Method,
} from '../support/community.js';
import { withClient } from '../support/database.js';
import { insertLibrary, UNAUTHORIZED, type InsertedLibrary } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

interface Route {
  name: string;
  method: Method;
  path: () => string;
  body?: object;
}

describe('moderation permissions', () => {
  let library: InsertedLibrary;
  let staged: InsertedLibrary;
  let reportId: number;
  let photoId: number;

  const routes: Route[] = [
    { name: 'GET summary', method: 'get', path: () => '/libraries/moderation/summary' },
    { name: 'GET libraries', method: 'get', path: () => '/libraries/moderation' },
    { name: 'GET libraries (trailing slash)', method: 'get', path: () => '/libraries/moderation/' },
    { name: 'GET library', method: 'get', path: () => `/libraries/moderation/${library.slug}` },
    {
      name: 'PATCH library',
      method: 'patch',
      path: () => `/libraries/moderation/${library.slug}`,
      body: { status: 'approved' },
    },
    {
      name: 'POST library changes',
      method: 'post',
      path: () => `/libraries/moderation/${staged.slug}/changes`,
      body: { action: 'reject' },
    },
    { name: 'GET reports', method: 'get', path: () => '/libraries/moderation/reports' },
    {
      name: 'PATCH report',
      method: 'patch',
      path: () => `/libraries/moderation/reports/${reportId}`,
      body: { status: 'resolved' },
    },
    { name: 'GET photos', method: 'get', path: () => '/libraries/moderation/photos' },
    {
      name: 'PATCH photo',
      method: 'patch',
      path: () => `/libraries/moderation/photos/${photoId}`,
      body: { status: 'approved' },
    },
  ];

  /** The state every refused request must leave alone. */
  const snapshot = () =>
    withClient(db.url, async (client) => {
      const libraries = await client.query(
        'SELECT id, status, pending_changes FROM libraries WHERE id = ANY($1) ORDER BY id',
        [[library.id, staged.id]],
      );
      const report = await client.query('SELECT status FROM reports WHERE id = $1', [reportId]);
      const photo = await client.query('SELECT status FROM library_photos WHERE id = $1', [
        photoId,
      ]);
      return { libraries: libraries.rows, report: report.rows, photo: photo.rows };
    });

  const { db, t, user, staff } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { user: 'user', staff: 'staff' },
  });

  beforeEach(async () => {
    library = await insertLibrary(db.url, { status: 'pending' });
    staged = await insertLibrary(db.url, { created_by: user.id });
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET pending_changes = '{"name": "Staged"}' WHERE id = $1`, [
        staged.id,
      ]),
    );
    reportId = await insertReport(db.url, { library_id: staged.id, created_by: user.id });
    photoId = await insertCommunityPhoto(db.url, { library_id: staged.id, created_by: user.id });
  });

  describe.each(routes)('$name', (route) => {
    it('answers 401 without a token, and changes nothing', async () => {
      const before = await snapshot();
      const res = await call(t.http, route.method, route.path(), undefined, route.body);
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
      expect(await snapshot()).toEqual(before);
    });

    it('answers 401 with a bad token', async () => {
      const res = await call(t.http, route.method, route.path(), 'not-a-jwt', route.body);
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
    });

    it('answers 403 Staff access required. for a normal user, and changes nothing', async () => {
      const before = await snapshot();
      const res = await call(t.http, route.method, route.path(), user.access, route.body);
      expect([res.status, res.body]).toEqual([403, STAFF_REQUIRED]);
      expect(await snapshot()).toEqual(before);
    });

    it('answers 200 for staff, privately', async () => {
      const res = await call(t.http, route.method, route.path(), staff.access, route.body);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
    });
  });

  it('validation does not run before the staff check', async () => {
    const res = await call(t.http, 'patch', '/libraries/moderation/reports/abc', user.access, {
      status: 'nonsense',
    });
    expect([res.status, res.body]).toEqual([403, STAFF_REQUIRED]);
  });

  it('staff status is read on every request: promotion and demotion take effect at once', async () => {
    const promoted = await registerUser(t.http);
    const before = await call(t.http, 'get', '/libraries/moderation/summary', promoted.access);
    expect(before.status).toBe(403);
    await makeStaff(db.url, promoted.id);
    expect(
      (await call(t.http, 'get', '/libraries/moderation/summary', promoted.access)).status,
    ).toBe(200);
    await withClient(db.url, (client) =>
      client.query('UPDATE users SET is_staff = false WHERE id = $1', [promoted.id]),
    );
    const after = await call(t.http, 'get', '/libraries/moderation/summary', promoted.access);
    expect([after.status, after.body]).toEqual([403, STAFF_REQUIRED]);
  });
});
