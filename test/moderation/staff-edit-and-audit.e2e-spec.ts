/**
 * Issue 18: staff edit every public field of a library (JSON or multipart), every staff decision lands in the
 * append-only audit trail (GET /libraries/moderation/audit), and rejected or replaced photos leave public view.
 */
import request from 'supertest';
import { StaffService } from '../../src/users/staff.service.js';
import { call, expectOnlyErrorsAt, getAs, postPhoto } from '../support/community.js';
import { takeEveryDecision } from '../support/decisions.js';
import { withClient } from '../support/database.js';
import {
  createLibrary,
  ISO_MS,
  jpeg,
  libraryRow,
  multipart,
  NOT_FOUND,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

interface AuditItem {
  id: number;
  kind: string;
  actor: { id: number; username: string } | null;
  library: {
    id: number;
    slug: string;
    name: string;
    address: string;
    city: string;
    country: string;
    status: string;
  } | null;
  details: Record<string, unknown>;
  created_at: string;
}

/** The distinct `loc`s of a 422, sorted. */
const errorLocs = (body: { details: { errors: { loc: unknown[] }[] } }): unknown[][] =>
  [...new Set(body.details.errors.map((error) => JSON.stringify(error.loc)))]
    .sort()
    .map((loc) => JSON.parse(loc) as unknown[]);

describe('staff edit, moderation audit trail and withdrawn media', () => {
  const { db, t, staff, other, alice } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', other: 'staff', alice: 'user' },
  });

  const patchLibrary = (slug: string, body: object, token = staff.access) =>
    call(t.http, 'patch', `/libraries/moderation/${slug}`, token, body);
  const audit = async (
    query = '',
  ): Promise<{ items: AuditItem[]; pagination: Record<string, unknown> }> => {
    const res = await getAs(t.http, `/libraries/moderation/audit${query}`, staff.access);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    return res.body;
  };

  describe('PATCH /libraries/moderation/{slug} as a staff edit', () => {
    it('edits fields in place (JSON) and records a field-level before/after', async () => {
      const created = await createLibrary(t.http, alice.access, {
        name: '',
        address: 'Marktplatz 1',
      });
      const res = await patchLibrary(created.slug, {
        name: 'Bücherschrank am Markt',
        address: 'Marktplatz 2',
        capacity: 40,
        latitude: 47.99,
        longitude: 7.85,
        description: created.description,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        slug: created.slug,
        name: 'Bücherschrank am Markt',
        address: 'Marktplatz 2',
        capacity: 40,
        lat: 47.99,
        lng: 7.85,
        status: 'pending',
        created_by: { id: alice.id, username: alice.username },
      });

      const { items } = await audit(`?library=${created.slug}`);
      expect(items).toHaveLength(1);
      expect(items[0]).toEqual({
        id: expect.any(Number),
        kind: 'library_edited',
        actor: { id: staff.id, username: staff.username },
        library: {
          id: created.id,
          slug: created.slug,
          name: 'Bücherschrank am Markt',
          address: 'Marktplatz 2',
          city: 'Freiburg',
          country: 'DE',
          status: 'pending',
        },
        details: {
          // The description was sent unchanged: not a change.
          changes: {
            name: { before: '', after: 'Bücherschrank am Markt' },
            address: { before: 'Marktplatz 1', after: 'Marktplatz 2' },
            capacity: { before: null, after: 40 },
            latitude: { before: 47.9959, after: 47.99 },
            longitude: { before: 7.8522, after: 7.85 },
          },
        },
        created_at: expect.stringMatching(ISO_MS),
      });
    });

    it('edits with a multipart form and replaces the photo; the old files stop being served', async () => {
      const created = await createLibrary(t.http, alice.access);
      const oldUrl = created.photo_url as string;
      expect((await request(t.http).get(oldUrl)).status).toBe(200);
      const res = await multipart(
        request(t.http).patch(`/api/v1/libraries/moderation/${created.slug}`),
        { city: 'Basel', country: 'ch', status: 'approved' },
        { data: await jpeg(80, 60) },
        staff.access,
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ city: 'Basel', country: 'CH', status: 'approved' });
      expect(res.body.photo_url).not.toBe(oldUrl);
      expect((await request(t.http).get(oldUrl)).status).toBe(404);
      const fresh = await request(t.http).get(res.body.photo_url as string);
      expect(fresh.status).toBe(200);
      expect(fresh.headers['cache-control']).toBe('public, max-age=300');

      const kinds = (await audit(`?library=${created.slug}`)).items.map((item) => item.kind);
      expect(kinds).toEqual(['library_approved', 'library_edited']);
    });

    it('refuses origin, permission and provenance fields with nothing changed', async () => {
      const created = await createLibrary(t.http, alice.access);
      for (const field of [
        'mapdb_submission_allowed',
        'submission_origin',
        'source',
        'external_id',
        'created_by',
      ]) {
        const res = await patchLibrary(created.slug, { [field]: 'x', name: 'Changed' });
        expect([res.status, res.body]).toEqual([
          400,
          { message: `Unsupported field: ${field}.`, details: null },
        ]);
      }
      expect((await libraryRow(db.url, created.slug))?.name).toBe(created.name);
      expect((await audit(`?library=${created.slug}`)).items).toEqual([]);
    });

    it('validates like a submission: 422 under body for JSON, under form for multipart', async () => {
      const created = await createLibrary(t.http, alice.access);
      const json = await patchLibrary(created.slug, { country: 'Germany', capacity: -1 });
      expect([json.status, json.body.message]).toEqual([422, 'Validation error.']);
      expect(errorLocs(json.body)).toEqual([
        ['body', 'capacity'],
        ['body', 'country'],
      ]);
      const form = await multipart(
        request(t.http).patch(`/api/v1/libraries/moderation/${created.slug}`),
        { website: 'ftp://example.org' },
        null,
        staff.access,
      );
      expect([form.status, form.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(form.body, ['form', 'website']);
      const half = await patchLibrary(created.slug, { latitude: 10 });
      expect([half.status, half.body.message]).toEqual([
        400,
        'Latitude and longitude must be provided together.',
      ]);
      expect((await audit(`?library=${created.slug}`)).items).toEqual([]);
    });

    it('leaves an owner staged edit for staff to decide, showing both', async () => {
      const created = await createLibrary(t.http, alice.access, { name: 'Before' });
      await patchLibrary(created.slug, { status: 'approved' }).expect(200);
      await multipart(
        request(t.http).patch(`/api/v1/libraries/${created.slug}`),
        { name: 'Owner name' },
        null,
        alice.access,
      ).expect(200);
      const res = await patchLibrary(created.slug, { description: 'Staff description.' });
      expect(res.body).toMatchObject({
        name: 'Before',
        description: 'Staff description.',
        pending_changes: { name: 'Owner name' },
      });
    });

    it('is staff only and 404 for an unknown slug', async () => {
      const created = await createLibrary(t.http, alice.access);
      expect((await patchLibrary(created.slug, { name: 'x' }, alice.access)).status).toBe(403);
      const missing = await patchLibrary('no-such-library', { name: 'x' });
      expect([missing.status, missing.body]).toEqual([404, NOT_FOUND]);
    });
  });

  describe('rejected community photos', () => {
    it("a rejected library's primary photo stops being served, and is served again once it leaves rejected", async () => {
      const created = await createLibrary(t.http, alice.access);
      const url = created.photo_url as string;
      expect((await request(t.http).get(url)).status).toBe(200);
      await patchLibrary(created.slug, {
        status: 'rejected',
        rejection_reason: 'Not a bookcase.',
      }).expect(200);
      expect((await request(t.http).get(url)).status).toBe(404);
      expect((await request(t.http).get(created.thumbnail_url as string)).status).toBe(404);
      await patchLibrary(created.slug, { status: 'approved' }).expect(200);
      expect((await request(t.http).get(url)).status).toBe(200);
      expect((await getAs(t.http, `/libraries/${created.slug}`)).body.photo_url).toBe(url);
    });

    it('a rejected photo answers 404 at its URL, and is served again if approved later', async () => {
      const created = await createLibrary(t.http, alice.access);
      await patchLibrary(created.slug, { status: 'approved' }).expect(200);
      const posted = await postPhoto(t.http, alice.access, created.slug);
      expect(posted.status).toBe(201);
      const approved = await call(
        t.http,
        'patch',
        `/libraries/moderation/photos/${posted.body.id}`,
        staff.access,
        {
          status: 'approved',
        },
      );
      const { photo_url: photoUrl, thumbnail_url: thumbnailUrl } = approved.body as Record<
        string,
        string
      >;
      expect((await request(t.http).get(photoUrl)).status).toBe(200);

      await call(t.http, 'patch', `/libraries/moderation/photos/${posted.body.id}`, staff.access, {
        status: 'rejected',
      }).expect(200);
      expect((await request(t.http).get(photoUrl)).status).toBe(404);
      expect((await request(t.http).get(thumbnailUrl)).status).toBe(404);
      const listed = await getAs(
        t.http,
        '/libraries/moderation/photos?status=rejected',
        staff.access,
      );
      expect(
        listed.body.items.find((item: { id: number }) => item.id === posted.body.id),
      ).toMatchObject({ status: 'rejected', photo_url: '', thumbnail_url: '' });
      const detail = await getAs(t.http, `/libraries/${created.slug}`);
      expect(JSON.stringify(detail.body)).not.toContain(
        photoUrl.split('/').pop()!.replace('.jpg', ''),
      );

      await call(t.http, 'patch', `/libraries/moderation/photos/${posted.body.id}`, staff.access, {
        status: 'approved',
      }).expect(200);
      expect((await request(t.http).get(photoUrl)).status).toBe(200);
    });
  });

  describe('GET /libraries/moderation/audit', () => {
    it('records every kind of decision, newest first, filterable by kind, actor and library', async () => {
      const created = await createLibrary(t.http, alice.access, { city: 'Audittown' });
      const slug = created.slug;
      const { photoId, reportId: report } = await takeEveryDecision(
        t.http,
        db.url,
        created,
        { staff, owner: alice, approver: other },
        'Blurry.',
      );
      const photo = { id: photoId };

      const { items, pagination } = await audit(`?library=${slug}&page_size=50`);
      expect(items.map((item) => item.kind)).toEqual([
        'report_dismissed',
        'report_reopened',
        'report_resolved',
        'photo_returned_to_pending',
        'photo_rejected',
        'photo_approved',
        'staged_edit_rejected',
        'staged_edit_applied',
        'library_approved',
        'library_returned_to_pending',
        'library_rejected',
      ]);
      expect(pagination).toEqual({
        page: 1,
        page_size: 50,
        total: 11,
        total_pages: 1,
        has_next: false,
        has_previous: false,
      });
      const byKind = Object.fromEntries(items.map((item) => [item.kind, item]));
      expect(byKind.library_rejected.details).toEqual({
        from: 'pending',
        to: 'rejected',
        reason: 'Blurry.',
      });
      expect(byKind.library_approved.actor).toEqual({ id: other.id, username: other.username });
      expect(byKind.staged_edit_applied.details).toEqual({
        changes: { name: { before: created.name, after: 'Staged approve' } },
        photo: false,
      });
      expect(byKind.photo_rejected.details).toEqual({
        photo_id: photo.id,
        from: 'approved',
        to: 'rejected',
      });
      expect(byKind.report_reopened.details).toEqual({
        report_id: report,
        from: 'resolved',
        to: 'open',
      });

      const approvals = await audit(`?kind=library_approved&library=${slug}`);
      expect(approvals.items.map((item) => item.kind)).toEqual(['library_approved']);
      const byOther = await audit(`?actor=${other.username.toUpperCase()}`);
      expect(new Set(byOther.items.map((item) => item.actor?.id))).toEqual(new Set([other.id]));
      const paged = await audit(`?library=${slug}&page=2&page_size=5`);
      expect(paged.items.map((item) => item.kind)).toEqual(
        items.slice(5, 10).map((item) => item.kind),
      );
    });

    it('lists staff accounts created and promoted by the command line, with no actor and no library', async () => {
      const staffService = t.app.get(StaffService);
      const created = await staffService.createOrPromote({
        username: 'night-shift',
        email: 'night@example.com',
        password: 'a-long-passphrase',
      });
      await staffService.createOrPromote({
        username: 'Night-Shift',
        email: 'night@example.com',
        password: 'another-passphrase',
      });
      const created_ = await audit('?kind=staff_created');
      const promoted = await audit('?kind=staff_promoted');
      for (const [page, kind] of [
        [created_, 'staff_created'],
        [promoted, 'staff_promoted'],
      ] as const) {
        expect(page.items[0]).toEqual({
          id: expect.any(Number),
          kind,
          actor: null,
          library: null,
          details: { user: { id: created.id, username: 'night-shift' }, via: 'cli' },
          created_at: expect.stringMatching(ISO_MS),
        });
      }
    });

    it('the audit trail is append-only', async () => {
      await expect(
        withClient(db.url, (client) => client.query('DELETE FROM moderation_audit_events')),
      ).rejects.toThrow(/append-only/);
    });

    it('validates its filters and is staff only', async () => {
      const bad = await getAs(
        t.http,
        '/libraries/moderation/audit?kind=everything&page_size=99',
        staff.access,
      );
      expect([bad.status, bad.body.message]).toEqual([422, 'Validation error.']);
      expect(errorLocs(bad.body)).toEqual([
        ['query', 'kind'],
        ['query', 'page_size'],
      ]);
      expect((await getAs(t.http, '/libraries/moderation/audit', alice.access)).status).toBe(403);
      expect((await getAs(t.http, '/libraries/moderation/audit')).status).toBe(401);
    });

    it('an unknown library or actor filter matches nothing', async () => {
      expect((await audit('?library=no-such-library')).items).toEqual([]);
      expect((await audit('?actor=nobody-at-all')).items).toEqual([]);
    });
  });
});
