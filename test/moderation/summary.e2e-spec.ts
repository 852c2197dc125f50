/** GET /libraries/moderation/summary (decisions §5): exact counts, and counts that follow moderation. */
import { registerUser } from '../support/auth.js';
import { call, insertCommunityPhoto, insertReport } from '../support/community.js';
import { insertLibraries, type InsertedLibrary } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

describe('GET /libraries/moderation/summary', () => {
  let libraries: InsertedLibrary[];
  let openReport: number;
  let pendingPhoto: number;

  const summary = async () => {
    const res = await call(t.http, 'get', '/libraries/moderation/summary', staff.access);
    expect(res.status).toBe(200);
    return res.body;
  };

  const { db, t, staff, alice } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', alice: 'user' },
  });

  beforeAll(async () => {
    await registerUser(t.http);
    libraries = await insertLibraries(db.url, [
      { status: 'approved' },
      { status: 'approved' },
      { status: 'approved' },
      { status: 'pending', created_by: alice.id },
      { status: 'pending' },
      { status: 'rejected' },
    ]);
    const [first, second] = libraries;
    openReport = await insertReport(db.url, {
      library_id: first.id,
      status: 'open',
      created_by: alice.id,
    });
    await insertReport(db.url, { library_id: second.id, status: 'open' });
    await insertReport(db.url, { library_id: first.id, status: 'resolved' });
    await insertReport(db.url, { library_id: first.id, status: 'dismissed' });
    pendingPhoto = await insertCommunityPhoto(db.url, {
      library_id: first.id,
      status: 'pending',
      created_by: alice.id,
    });
    await insertCommunityPhoto(db.url, { library_id: second.id, status: 'pending' });
    await insertCommunityPhoto(db.url, { library_id: first.id, status: 'approved' });
    await insertCommunityPhoto(db.url, { library_id: second.id, status: 'rejected' });
  });

  it('counts pending work, approved libraries and users', async () => {
    expect(await summary()).toEqual({
      pending_libraries_count: 2,
      open_reports_count: 2,
      pending_photos_count: 2,
      total_pending: 6,
      total_libraries: 3,
      total_users: 3,
    });
  });

  it('follows moderation through the API', async () => {
    const pendingLibrary = libraries[3];
    expect(
      (
        await call(t.http, 'patch', `/libraries/moderation/${pendingLibrary.slug}`, staff.access, {
          status: 'approved',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(t.http, 'patch', `/libraries/moderation/reports/${openReport}`, staff.access, {
          status: 'resolved',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(t.http, 'patch', `/libraries/moderation/photos/${pendingPhoto}`, staff.access, {
          status: 'rejected',
        })
      ).status,
    ).toBe(200);
    await registerUser(t.http);

    expect(await summary()).toEqual({
      pending_libraries_count: 1,
      open_reports_count: 1,
      pending_photos_count: 1,
      total_pending: 3,
      total_libraries: 4,
      total_users: 4,
    });
  });
});
