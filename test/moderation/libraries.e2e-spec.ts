/**
 * Staff library moderation (decisions §5): the list with its filters, the detail, status changes with a rejection
 * reason, and staged owner edits applied or discarded through POST {slug}/changes.
 */
import request from 'supertest';
import { bearer, makeStaff, registerUser, type RegisteredUser } from '../support/auth.js';
import { createTestApp, type TestApp, describeWithDatabaseServer } from '../support/app.js';
import { call, expectOnlyErrorsAt, getAs, postPhoto } from '../support/community.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createLibrary,
  insertLibraries,
  jpeg,
  libraryRow,
  mediaFiles,
  multipart,
  NOT_FOUND,
  sortedKeys,
  withFields,
  type InsertedLibrary,
  onePage,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const MODERATION_FIELDS = withFields('status', 'rejection_reason', 'created_by', 'pending_changes');

const slugsOf = (body: { items: { slug: string }[] }): string[] =>
  body.items.map((item) => item.slug);

describe('staff library moderation', () => {
  const { db, t, staff, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', alice: 'user', bob: 'user' },
  });

  const asStaff = (path: string) => getAs(t.http, path, staff.access);
  const patchLibrary = (slug: string, body: object) =>
    call(t.http, 'patch', `/libraries/moderation/${slug}`, staff.access, body);
  const reviewChanges = (slug: string, body: object) =>
    call(t.http, 'post', `/libraries/moderation/${slug}/changes`, staff.access, body);

  // Holds a second database while the outer one is in use: needs a database server (see describeWithDatabaseServer).
  describeWithDatabaseServer('GET /libraries/moderation', () => {
    let l1: InsertedLibrary;
    let l2: InsertedLibrary;
    let l3: InsertedLibrary;
    let l4: InsertedLibrary;
    let l5: InsertedLibrary;
    let listDb: TestDatabase;
    let listApp: TestApp;
    let listStaff: RegisteredUser;
    let owner: RegisteredUser;

    const list = async (query = ''): Promise<request.Response> => {
      const res = await getAs(listApp.http, `/libraries/moderation${query}`, listStaff.access);
      return res;
    };
    const listed = async (query: string): Promise<string[]> => {
      const res = await list(query);
      expect(res.status).toBe(200);
      return slugsOf(res.body);
    };

    beforeAll(async () => {
      // A database of its own, so every filter's answer is known exactly.
      listDb = await createTestDatabase();
      listApp = await createTestApp({
        databaseUrl: listDb.url,
        env: { RATE_LIMIT_ENABLED: 'false' },
      });
      listStaff = await registerUser(listApp.http);
      await makeStaff(listDb.url, listStaff.id);
      owner = await registerUser(listApp.http);
      [l1, l2, l3, l4, l5] = await insertLibraries(listDb.url, [
        {
          name: 'Alpha Shelf',
          address: 'Marktplatz 1',
          city: 'Berlin',
          country: 'DE',
          source: 'osm',
          created_by: owner.id,
          created_at: '2026-01-01T00:00:00.000Z',
        },
        {
          name: 'Bravo Box',
          description: 'zebra crossing nearby',
          address: 'Hauptstraße 5',
          city: 'Hamburg',
          country: 'DE',
          status: 'pending',
          created_by: owner.id,
          created_at: '2026-02-01T00:00:00.000Z',
        },
        {
          name: 'Charlie Case',
          city: 'Paris',
          country: 'FR',
          status: 'rejected',
          rejection_reason: 'Duplicate entry',
          created_by: null,
          created_at: '2026-03-01T00:00:00.000Z',
        },
        {
          name: 'Delta 100% Books',
          address: 'Rue_du_Lac 3',
          city: 'Lyon',
          country: 'FR',
          source: 'import-2024',
          created_at: '2026-04-01T00:00:00.000Z',
        },
        {
          name: 'Echo',
          city: 'Wien',
          country: 'AT',
          status: 'pending',
          source: 'osm',
          created_at: '2026-05-01T00:00:00.000Z',
        },
      ]);
    });

    afterAll(async () => {
      await listApp?.close();
      await listDb?.drop();
    });

    it('lists every status by default, newest first, in the moderation shape', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(slugsOf(res.body)).toEqual([l5.slug, l4.slug, l3.slug, l2.slug, l1.slug]);
      expect(res.body.pagination).toEqual(onePage(5));
      for (const item of res.body.items) expect(sortedKeys(item)).toEqual(MODERATION_FIELDS);
      const byName = Object.fromEntries(
        res.body.items.map((item: { name: string }) => [item.name, item]),
      );
      expect(byName['Alpha Shelf']).toMatchObject({
        id: l1.id,
        status: 'approved',
        rejection_reason: '',
        created_by: { id: owner.id, username: owner.username },
        pending_changes: null,
        source: 'osm',
        is_favourited: false,
        created_at: '2026-01-01T00:00:00.000Z',
      });
      expect(byName['Bravo Box']).toMatchObject({ status: 'pending', rejection_reason: '' });
      expect(byName['Charlie Case']).toMatchObject({
        status: 'rejected',
        rejection_reason: 'Duplicate entry',
        created_by: null,
      });
      // The private permission and provenance fields stay out even here.
      expect(JSON.stringify(res.body)).not.toMatch(
        /mapdb_submission_allowed|submission_origin|external_id/,
      );
    });

    it.each([
      ['?status=all', () => [l5, l4, l3, l2, l1]],
      ['?status=pending', () => [l5, l2]],
      ['?status=approved', () => [l4, l1]],
      ['?status=rejected', () => [l3]],
      ['?q=shelf', () => [l1]],
      ['?q=MARKTPLATZ', () => [l1]],
      ['?q=hamb', () => [l2]],
      ['?q=zebra', () => []],
      ['?q=100%25', () => [l4]],
      ['?q=%25', () => [l4]],
      ['?q=_', () => [l4]],
      ['?q=%20%20shelf%20', () => [l1]],
      ['?country=fr', () => [l4, l3]],
      ['?country=De', () => [l2, l1]],
      ['?source=osm', () => [l5, l1]],
      ['?source=import-2024', () => [l4]],
      ['?status=approved&country=de', () => [l1]],
      ['?status=pending&source=osm&q=ech', () => [l5]],
    ])('%s', async (query, expected) => {
      expect(await listed(query)).toEqual(expected().map((library) => library.slug));
    });

    it('paginates', async () => {
      const first = await list('?page_size=2');
      expect(slugsOf(first.body)).toEqual([l5.slug, l4.slug]);
      expect(first.body.pagination).toEqual({
        page: 1,
        page_size: 2,
        total: 5,
        total_pages: 3,
        has_next: true,
        has_previous: false,
      });
      const last = await list('?page=3&page_size=2&status=all');
      expect(slugsOf(last.body)).toEqual([l1.slug]);
      expect(last.body.pagination).toMatchObject({ page: 3, has_next: false, has_previous: true });
    });

    it.each([
      ['status=published', '?status=published', ['query', 'status']],
      ['status=ALL', '?status=ALL', ['query', 'status']],
      ['page_size=51', '?page_size=51', ['query', 'page_size']],
      ['q of 201 characters', `?q=${'x'.repeat(201)}`, ['query', 'q']],
    ])('%s is 422', async (_name, query, loc) => {
      const res = await list(query);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, loc);
    });
  });

  describe('GET /libraries/moderation/{slug}', () => {
    it('shows a library of any status, with its submitter', async () => {
      const [pending, rejected] = await insertLibraries(db.url, [
        { status: 'pending', created_by: alice.id, name: 'Pending One' },
        { status: 'rejected', rejection_reason: 'Private garden', name: 'Rejected One' },
      ]);
      const res = await asStaff(`/libraries/moderation/${pending.slug}`);
      expect(res.status).toBe(200);
      expect(sortedKeys(res.body)).toEqual(MODERATION_FIELDS);
      expect(res.body).toMatchObject({
        id: pending.id,
        slug: pending.slug,
        name: 'Pending One',
        status: 'pending',
        rejection_reason: '',
        created_by: { id: alice.id, username: alice.username },
        pending_changes: null,
      });
      const other = await asStaff(`/libraries/moderation/${rejected.slug}`);
      expect(other.body).toMatchObject({
        status: 'rejected',
        rejection_reason: 'Private garden',
        created_by: null,
      });
    });

    it('an unknown slug is 404', async () => {
      const res = await asStaff('/libraries/moderation/no-such-library');
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    });
  });

  describe('PATCH /libraries/moderation/{slug}', () => {
    it('approving a submission publishes it', async () => {
      const created = await createLibrary(t.http, alice.access, {
        name: 'Approve Me',
        city: 'Approvalville',
      });
      const hidden = await getAs(t.http, '/libraries/?city=Approvalville');
      expect(slugsOf(hidden.body)).toEqual([]);

      const res = await patchLibrary(created.slug, { status: 'approved' });
      expect(res.status).toBe(200);
      expect(sortedKeys(res.body)).toEqual(MODERATION_FIELDS);
      expect(res.body).toMatchObject({
        slug: created.slug,
        name: 'Approve Me',
        status: 'approved',
        rejection_reason: '',
        created_by: { id: alice.id, username: alice.username },
      });

      const listed = await getAs(t.http, '/libraries/?city=Approvalville');
      expect(slugsOf(listed.body)).toEqual([created.slug]);
      expect((await getAs(t.http, `/libraries/${created.slug}`)).status).toBe(200);
    });

    it("rejecting with a reason shows the reason in the owner's /libraries/mine and hides the library from others", async () => {
      const created = await createLibrary(t.http, alice.access, { name: 'Reject Me' });
      const res = await patchLibrary(created.slug, {
        status: 'rejected',
        rejection_reason: '  Too blurry to verify.  ',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'rejected',
        rejection_reason: 'Too blurry to verify.',
      });

      const mine = await getAs(t.http, '/libraries/mine?page_size=50', alice.access);
      const item = mine.body.items.find((entry: { slug: string }) => entry.slug === created.slug);
      expect(item).toMatchObject({ status: 'rejected', rejection_reason: 'Too blurry to verify.' });
      // Hidden from everyone but its creator, who reads it with the reason (the iOS app opens it by slug).
      const detail = await getAs(t.http, `/libraries/${created.slug}`, alice.access);
      expect([detail.status, detail.body.status, detail.body.rejection_reason]).toEqual([
        200,
        'rejected',
        'Too blurry to verify.',
      ]);
      const anonymous = await request(t.http).get(`/api/v1/libraries/${created.slug}`);
      expect([anonymous.status, anonymous.body]).toEqual([404, NOT_FOUND]);

      // Approving later clears the reason.
      const approved = await patchLibrary(created.slug, { status: 'approved' });
      expect(approved.body).toMatchObject({ status: 'approved', rejection_reason: '' });
      expect((await libraryRow(db.url, created.slug))?.rejection_reason).toBe('');
    });

    it('rejecting without a reason stores ""', async () => {
      const created = await createLibrary(t.http, alice.access);
      const res = await patchLibrary(created.slug, { status: 'rejected' });
      expect(res.body).toMatchObject({ status: 'rejected', rejection_reason: '' });
    });

    it('a reason sent with another status is not kept', async () => {
      const created = await createLibrary(t.http, alice.access);
      const res = await patchLibrary(created.slug, {
        status: 'approved',
        rejection_reason: 'ignored',
      });
      expect(res.body).toMatchObject({ status: 'approved', rejection_reason: '' });
    });

    it('returning an approved library to pending takes it off the public list', async () => {
      const created = await createLibrary(t.http, alice.access, { city: 'Backtopending' });
      await patchLibrary(created.slug, { status: 'approved' }).expect(200);
      const res = await patchLibrary(created.slug, { status: 'pending' });
      expect(res.body.status).toBe('pending');
      expect(slugsOf((await getAs(t.http, '/libraries/?city=Backtopending')).body)).toEqual([]);
    });

    it('a body with neither a status nor a field is 400 and changes nothing', async () => {
      const created = await createLibrary(t.http, alice.access);
      const res = await patchLibrary(created.slug, {});
      expect([res.status, res.body]).toEqual([
        400,
        { message: 'Provide at least one field to update.', details: null },
      ]);
      expect((await libraryRow(db.url, created.slug))?.status).toBe('pending');
    });

    it('an unknown slug is 404', async () => {
      const res = await patchLibrary('no-such-library', { status: 'approved' });
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    });

    it.each([
      ['an unknown status', { status: 'published' }, ['body', 'status']],
      [
        'a reason that is not text',
        { status: 'rejected', rejection_reason: 42 },
        ['body', 'rejection_reason'],
      ],
      [
        'a reason over 2000 characters',
        { status: 'rejected', rejection_reason: 'r'.repeat(2001) },
        ['body', 'rejection_reason'],
      ],
    ])('%s is 422 and changes nothing', async (_name, body, loc) => {
      const created = await createLibrary(t.http, alice.access);
      const res = await patchLibrary(created.slug, body);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, loc);
      expect((await libraryRow(db.url, created.slug))?.status).toBe('pending');
    });
  });

  describe('staged owner edits: POST /libraries/moderation/{slug}/changes', () => {
    /** A library of alice's, approved, as the public sees it. */
    async function approvedLibrary(overrides: Record<string, string | number> = {}) {
      const created = await createLibrary(t.http, alice.access, {
        name: 'Original Name',
        ...overrides,
      });
      await patchLibrary(created.slug, { status: 'approved' }).expect(200);
      return created;
    }

    const ownerEdit = (slug: string, fields: Record<string, string | number>, photo?: Buffer) =>
      multipart(
        request(t.http).patch(`/api/v1/libraries/${slug}`),
        fields,
        photo ? { data: photo } : null,
        alice.access,
      );

    it('approve applies the staged edit: the public view changes and pending_changes is null', async () => {
      const library = await approvedLibrary();
      const edit = await ownerEdit(library.slug, {
        name: 'Renamed Shelf',
        description: 'Now with a bench.',
        latitude: 48.1,
        longitude: 11.5,
      });
      expect(edit.status).toBe(200);

      const unchanged = await getAs(t.http, `/libraries/${library.slug}`);
      expect(unchanged.body).toMatchObject({
        name: 'Original Name',
        lat: library.lat,
        lng: library.lng,
      });
      const staged = await asStaff(`/libraries/moderation/${library.slug}`);
      expect(staged.body.pending_changes).toEqual({
        name: 'Renamed Shelf',
        description: 'Now with a bench.',
        latitude: 48.1,
        longitude: 11.5,
      });
      expect(staged.body.name).toBe('Original Name');

      const res = await reviewChanges(library.slug, { action: 'approve' });
      expect(res.status).toBe(200);
      expect(sortedKeys(res.body)).toEqual(MODERATION_FIELDS);
      expect(res.body).toMatchObject({
        name: 'Renamed Shelf',
        description: 'Now with a bench.',
        lat: 48.1,
        lng: 11.5,
        status: 'approved',
        pending_changes: null,
      });

      const published = await getAs(t.http, `/libraries/${library.slug}`);
      expect(published.body).toMatchObject({
        slug: library.slug,
        name: 'Renamed Shelf',
        description: 'Now with a bench.',
        lat: 48.1,
        lng: 11.5,
      });
      const mine = await getAs(t.http, '/libraries/mine?page_size=50', alice.access);
      const item = mine.body.items.find((entry: { slug: string }) => entry.slug === library.slug);
      expect(item.pending_changes).toBeNull();
    });

    it('reject discards the staged edit: the public view stays and pending_changes is null', async () => {
      const library = await approvedLibrary({ city: 'Keepton' });
      await ownerEdit(library.slug, { city: 'Elsewhere', name: 'Discard Me' }).expect(200);

      const res = await reviewChanges(library.slug, { action: 'reject' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'Original Name',
        city: 'Keepton',
        pending_changes: null,
      });
      const published = await getAs(t.http, `/libraries/${library.slug}`);
      expect(published.body).toMatchObject({ name: 'Original Name', city: 'Keepton' });
      const row = await libraryRow(db.url, library.slug);
      expect([row?.pending_changes, row?.pending_photo]).toEqual([null, null]);
    });

    it('approving a staged photo publishes it and deletes the replaced files', async () => {
      const library = await approvedLibrary();
      const oldPhoto = library.photo_url as string;
      const edit = await ownerEdit(library.slug, {}, await jpeg(80, 60));
      expect(edit.status).toBe(200);
      const stagedUrl = edit.body.pending_changes.photo_url as string;
      expect(stagedUrl).toMatch(/^\/media\/.+\.jpg$/);
      expect((await getAs(t.http, `/libraries/${library.slug}`)).body.photo_url).toBe(oldPhoto);

      const res = await reviewChanges(library.slug, { action: 'approve' });
      expect([res.status, res.body.photo_url, res.body.pending_changes]).toEqual([
        200,
        stagedUrl,
        null,
      ]);
      expect((await getAs(t.http, `/libraries/${library.slug}`)).body.photo_url).toBe(stagedUrl);
      const files = await mediaFiles(t);
      expect(files).toContain(stagedUrl.replace('/media/', ''));
      expect(files).not.toContain(oldPhoto.replace('/media/', ''));
    });

    it('rejecting a staged photo keeps the published one and deletes the staged files', async () => {
      const library = await approvedLibrary();
      const edit = await ownerEdit(library.slug, { name: 'With photo' }, await jpeg(80, 60));
      const staged = edit.body.pending_changes as { photo_url: string; thumbnail_url: string };

      const res = await reviewChanges(library.slug, { action: 'reject' });
      expect([res.status, res.body.photo_url, res.body.name]).toEqual([
        200,
        library.photo_url,
        'Original Name',
      ]);
      const files = await mediaFiles(t);
      expect(files).toContain((library.photo_url as string).replace('/media/', ''));
      expect(files).not.toContain(staged.photo_url.replace('/media/', ''));
      expect(files).not.toContain(staged.thumbnail_url.replace('/media/', ''));
    });

    it('approving a staged photo keeps the files of a community photo that was the primary', async () => {
      const [library] = await insertLibraries(db.url, [
        { name: 'Community Primary', created_by: alice.id },
      ]);
      const community = await postPhoto(t.http, bob.access, library.slug, { caption: 'by bob' });
      const approved = await call(
        t.http,
        'patch',
        `/libraries/moderation/photos/${community.body.id}`,
        staff.access,
        {
          status: 'approved',
        },
      );
      expect((await getAs(t.http, `/libraries/${library.slug}`)).body.photo_url).toBe(
        approved.body.photo_url,
      );

      await ownerEdit(library.slug, {}, await jpeg(80, 60)).expect(200);
      const res = await reviewChanges(library.slug, { action: 'approve' });
      expect(res.status).toBe(200);
      expect(res.body.photo_url).not.toBe(approved.body.photo_url);

      const detail = await getAs(t.http, `/libraries/${library.slug}`);
      expect(detail.body.photos.map((photo: { photo_url: string }) => photo.photo_url)).toEqual([
        approved.body.photo_url,
      ]);
      const files = await mediaFiles(t);
      expect(files).toContain(approved.body.photo_url.replace('/media/', ''));
      expect(files).toContain(approved.body.thumbnail_url.replace('/media/', ''));
    });

    it('with nothing staged it is 400', async () => {
      const library = await approvedLibrary();
      const res = await reviewChanges(library.slug, { action: 'approve' });
      expect([res.status, res.body]).toEqual([
        400,
        { message: 'No staged changes to review.', details: null },
      ]);
      expect((await getAs(t.http, `/libraries/${library.slug}`)).body.name).toBe('Original Name');
    });

    it.each([[{ action: 'apply' }], [{}], [{ action: 'APPROVE' }]])(
      '%j is 422 at [body, action]',
      async (body) => {
        const library = await approvedLibrary();
        await ownerEdit(library.slug, { name: 'Still staged' }).expect(200);
        const res = await reviewChanges(library.slug, body);
        expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
        expectOnlyErrorsAt(res.body, ['body', 'action']);
        expect((await libraryRow(db.url, library.slug))?.pending_changes).toEqual({
          name: 'Still staged',
        });
      },
    );

    it('an unknown slug is 404', async () => {
      const res = await reviewChanges('no-such-library', { action: 'approve' });
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    });

    it('an owner edit by someone else is 404, so there is nothing for staff to see', async () => {
      const library = await approvedLibrary();
      const res = await multipart(
        request(t.http).patch(`/api/v1/libraries/${library.slug}`),
        { name: 'Hijack' },
        null,
      ).set('Authorization', bearer(bob.access));
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
      expect(
        (await asStaff(`/libraries/moderation/${library.slug}`)).body.pending_changes,
      ).toBeNull();
    });
  });
});
