/**
 * The eligibility predicate as staff see it (GET /{slug} blockers, GET /?eligible=), over libraries reached the way
 * production reaches them: user submissions through POST /libraries/ (origin `user`), moderation through its API,
 * account deletion through DELETE /auth/me, staged edits through the owner's PATCH. Rows the API cannot make
 * (legacy, import, staff origin, map-database source) are inserted with SQL. Every library gets a passed duplicate
 * check first, so each blocker list below holds exactly the condition under test. Also: the permission never shows
 * in public responses, and owner edits cannot change it.
 */
import request from 'supertest';
import { bearer, registerUser } from '../support/auth.js';
import {
  defaultPhoto,
  insertLibrary,
  libraryRow,
  multipart,
  type LibraryFixture,
} from '../support/libraries.js';
import {
  adminGet,
  adminPost,
  checkPasses,
  codes,
  moderate,
  nextPosition,
  submitLibrary,
  mapSuite,
} from './helpers.js';

const PERMISSION = 'mapdb_submission_allowed';

describe('map contribution eligibility', () => {
  const { db, t, staff, owner } = mapSuite();
  /** slug → the exact blocker codes expected once checked. */
  const expected = new Map<string, string[]>();

  const detail = async (slug: string) => {
    const res = await adminGet(t.http, staff.access, `/${slug}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  /** Checks the library (no candidates: no_match), then answers its blocker codes. */
  const blockersAfterCheck = async (slug: string, remember = true) => {
    await checkPasses(t.http, staff, slug);
    const body = await detail(slug);
    expect(body.eligible).toBe(codes(body).length === 0);
    if (remember) expected.set(slug, codes(body));
    return codes(body);
  };

  const sqlLibrary = (fixture: LibraryFixture) => {
    const { latitude, longitude } = nextPosition();
    return insertLibrary(db.url, {
      lat: latitude,
      lng: longitude,
      created_by: owner.id,
      ...fixture,
    });
  };

  describe('the permission as submitted', () => {
    it('true on an approved user submission is eligible once checked, and reads as such', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      expect(lib.body[PERMISSION]).toBe(true);
      const unchecked = await detail(lib.slug);
      expect(unchecked).toMatchObject({
        library: { id: lib.id, slug: lib.slug, status: 'approved', [PERMISSION]: true },
        status: 'unchecked',
        eligible: false,
        events: [],
      });
      expect(codes(unchecked)).toEqual(['check_missing']);
      expect(await blockersAfterCheck(lib.slug)).toEqual([]);
    });

    it('omitted: false, ineligible (permission_missing)', async () => {
      const lib = await submitLibrary(t.http, owner, staff, { [PERMISSION]: undefined });
      expect(lib.body[PERMISSION]).toBe(false);
      expect(await blockersAfterCheck(lib.slug)).toEqual(['permission_missing']);
      expect(await detail(lib.slug)).toMatchObject({ library: { [PERMISSION]: false } });
    });

    it('explicit false: ineligible (permission_missing)', async () => {
      const lib = await submitLibrary(t.http, owner, staff, { [PERMISSION]: false });
      expect(lib.body[PERMISSION]).toBe(false);
      expect(await blockersAfterCheck(lib.slug)).toEqual(['permission_missing']);
    });

    it('separate submissions of one user hold independent values, in either order', async () => {
      const submitter = await registerUser(t.http);
      const first = await submitLibrary(t.http, submitter, staff, { [PERMISSION]: true });
      const second = await submitLibrary(t.http, submitter, staff, { [PERMISSION]: false });
      const third = await submitLibrary(t.http, submitter, staff, { [PERMISSION]: undefined });
      const fourth = await submitLibrary(t.http, submitter, staff, { [PERMISSION]: true });

      const mine = await request(t.http)
        .get('/api/v1/libraries/mine')
        .set('Authorization', bearer(submitter.access));
      expect(mine.status).toBe(200);
      const bySlug = Object.fromEntries(
        mine.body.items.map((item: Record<string, unknown>) => [item.slug, item[PERMISSION]]),
      );
      expect(bySlug).toEqual({
        [first.slug]: true,
        [second.slug]: false,
        [third.slug]: false,
        [fourth.slug]: true,
      });
      expect(await blockersAfterCheck(first.slug)).toEqual([]);
      expect(await blockersAfterCheck(second.slug)).toEqual(['permission_missing']);
      expect(await blockersAfterCheck(third.slug)).toEqual(['permission_missing']);
      expect(await blockersAfterCheck(fourth.slug)).toEqual([]);

      // Withdrawing one leaves the others as they were.
      expect((await adminPost(t.http, staff.access, `/${first.slug}/withdraw`)).status).toBe(200);
      expected.set(first.slug, ['permission_missing']);
      expect((await libraryRow(db.url, fourth.id))?.[PERMISSION]).toBe(true);
      expect(codes(await detail(fourth.slug))).toEqual([]);
      expect(codes(await detail(first.slug))).toEqual(['permission_missing']);
    });
  });

  describe('records of the wrong kind are blocked by name', () => {
    const allowed = { [PERMISSION]: true, mapdb_submission_allowed_at: new Date() };

    it.each([
      ['legacy', { submission_origin: 'legacy' }],
      ['imported', { submission_origin: 'import', source: 'city-open-data' }],
      ['staff-created', { submission_origin: 'staff' }],
    ])('%s (origin_not_user), even with the permission set', async (_kind, fixture) => {
      const lib = await sqlLibrary({ ...allowed, ...fixture });
      expect(await blockersAfterCheck(lib.slug)).toEqual(['origin_not_user']);
    });

    it('ownerless: the submitter deleted the account (submitter_missing)', async () => {
      const leaving = await registerUser(t.http);
      const lib = await submitLibrary(t.http, leaving, staff);
      expect(await blockersAfterCheck(lib.slug, false)).toEqual([]);
      const res = await request(t.http)
        .delete('/api/v1/auth/me')
        .set('Authorization', bearer(leaving.access))
        .send({ password: leaving.password });
      expect(res.status).toBe(200);
      expect((await libraryRow(db.url, lib.id))?.created_by).toBeNull();
      expect(codes(await detail(lib.slug))).toEqual(['submitter_missing']);
      expected.set(lib.slug, ['submitter_missing']);
    });

    it('rejected (not_approved)', async () => {
      const lib = await submitLibrary(t.http, owner, staff, {}, false);
      await moderate(t.http, staff, lib.slug, { status: 'rejected', rejection_reason: 'Blurry.' });
      expect(await blockersAfterCheck(lib.slug)).toEqual(['not_approved']);
    });

    it('pending, never approved (not_approved)', async () => {
      const lib = await submitLibrary(t.http, owner, staff, {}, false);
      expect(await blockersAfterCheck(lib.slug)).toEqual(['not_approved']);
    });

    it('approved, then returned to pending by moderation (not_approved)', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      await moderate(t.http, staff, lib.slug, { status: 'pending' });
      expect(await blockersAfterCheck(lib.slug)).toEqual(['not_approved']);
    });

    it('a staged owner edit awaiting moderation (pending_changes), cleared by its review', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      const edit = await multipart(
        request(t.http).patch(`/api/v1/libraries/${lib.slug}`),
        { capacity: 40 },
        null,
        owner.access,
      );
      expect([edit.status, edit.body.pending_changes]).toEqual([200, { capacity: 40 }]);
      expect(await blockersAfterCheck(lib.slug, false)).toEqual(['pending_changes']);

      const review = await request(t.http)
        .post(`/api/v1/libraries/moderation/${lib.slug}/changes`)
        .set('Authorization', bearer(staff.access))
        .send({ action: 'approve' });
      expect(review.status).toBe(200);
      expect(codes(await detail(lib.slug))).toEqual([]);
      expected.set(lib.slug, []);
    });

    it('a staged photo awaiting moderation (pending_photo)', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      const edit = await multipart(
        request(t.http).patch(`/api/v1/libraries/${lib.slug}`),
        {},
        { data: await defaultPhoto() },
        owner.access,
      );
      expect(edit.status).toBe(200);
      const row = await libraryRow(db.url, lib.id);
      expect([row?.pending_changes, row?.pending_photo === null]).toEqual([null, false]);
      expect(await blockersAfterCheck(lib.slug)).toEqual(['pending_photo']);
    });

    it.each([
      ['source naming the map database', { source: 'OpenStreetMap' }],
      ['source naming it in another spelling', { source: 'osm_import' }],
      ['external_id holding an element reference', { external_id: 'node/123456' }],
      ['external_id holding a map URL', { external_id: 'https://www.openstreetmap.org/node/7' }],
    ])('%s (mapdb_source)', async (_kind, fixture) => {
      const lib = await sqlLibrary({ ...allowed, submission_origin: 'user', ...fixture });
      expect(await blockersAfterCheck(lib.slug)).toEqual(['mapdb_source']);
    });

    it('a library nobody checked yet (check_missing), and every failing condition at once', async () => {
      const lib = await sqlLibrary({
        status: 'pending',
        submission_origin: 'import',
        created_by: null,
        source: 'OpenStreetMap',
      });
      const body = await detail(lib.slug);
      expect(body.status).toBe('unchecked');
      expect(codes(body)).toEqual([
        'not_approved',
        'origin_not_user',
        'submitter_missing',
        'permission_missing',
        'mapdb_source',
        'check_missing',
      ]);
      for (const blocker of body.blockers) expect(blocker.message).toEqual(expect.any(String));
    });
  });

  describe('GET / filters', () => {
    type Item = { library: { slug: string }; eligible: boolean; blockers: { code: string }[] };
    const list = async (query: string): Promise<Item[]> => {
      const res = await adminGet(t.http, staff.access, `/?page_size=50${query}`);
      expect(res.status).toBe(200);
      return res.body.items;
    };

    it('eligible=true lists exactly the eligible libraries; eligible=false the blocked ones', async () => {
      const eligibleSlugs = [...expected].filter(([, c]) => c.length === 0).map(([s]) => s);
      const blockedSlugs = [...expected].filter(([, c]) => c.length > 0).map(([s]) => s);
      expect(eligibleSlugs.length).toBeGreaterThanOrEqual(3);
      expect(blockedSlugs.length).toBeGreaterThanOrEqual(10);

      const eligible = await list('&eligible=true');
      expect(eligible.map((item) => item.library.slug).sort()).toEqual(eligibleSlugs.sort());
      expect(eligible.every((item) => item.eligible && item.blockers.length === 0)).toBe(true);

      const blocked = await list('&eligible=false');
      const blockedBySlug = new Map(blocked.map((item) => [item.library.slug, item]));
      for (const slug of blockedSlugs) {
        expect([slug, codes(blockedBySlug.get(slug)!)]).toEqual([slug, expected.get(slug)]);
      }
      for (const slug of eligibleSlugs) expect(blockedBySlug.has(slug)).toBe(false);
    });

    it('status filters by contribution state; other values are 422', async () => {
      const noMatch = await list('&status=no_match');
      expect(noMatch.length).toBe(expected.size);
      expect((await list('&status=contributed')).length).toBe(0);
      const bad = await adminGet(t.http, staff.access, '/?status=bogus');
      expect(bad.status).toBe(422);
      const badBool = await adminGet(t.http, staff.access, '/?eligible=maybe');
      expect(badBool.status).toBe(422);
    });
  });

  describe('the permission stays private and owner-immutable', () => {
    it('never appears in public list, latest, detail, countries, favourites or statistics', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      const reader = await registerUser(t.http);
      const fav = await request(t.http)
        .post(`/api/v1/libraries/${lib.slug}/favourite`)
        .set('Authorization', bearer(reader.access));
      expect(fav.status).toBe(201);

      const urls = [
        '/api/v1/libraries/',
        `/api/v1/libraries/?q=${encodeURIComponent('Bücherschrank')}`,
        '/api/v1/libraries/latest',
        `/api/v1/libraries/${lib.slug}`,
        '/api/v1/libraries/countries/',
        '/api/v1/statistics/',
        '/api/v1/libraries/favourites',
      ];
      for (const url of urls) {
        for (const token of [null, reader.access, owner.access]) {
          if (!token && url.endsWith('/favourites')) continue;
          let req = request(t.http).get(url);
          if (token) req = req.set('Authorization', bearer(token));
          const res = await req;
          expect([url, res.status]).toEqual([url, 200]);
          expect(res.text).not.toMatch(/mapdb/i);
        }
      }
      const favourites = await request(t.http)
        .get('/api/v1/libraries/favourites')
        .set('Authorization', bearer(reader.access));
      expect(favourites.body.items.map((item: { slug: string }) => item.slug)).toEqual([lib.slug]);
    });

    it.each([
      [true, 'false'],
      [false, 'true'],
    ])(
      'an owner PATCH sending it (stored %s, sent %s) is 400 and changes nothing',
      async (stored, sent) => {
        const lib = await submitLibrary(t.http, owner, staff, { [PERMISSION]: stored });
        const before = await libraryRow(db.url, lib.id);
        for (const fields of [{ [PERMISSION]: sent }, { [PERMISSION]: sent, capacity: 9 }]) {
          const res = await multipart(
            request(t.http).patch(`/api/v1/libraries/${lib.slug}`),
            fields,
            null,
            owner.access,
          );
          expect([res.status, res.body]).toEqual([
            400,
            { message: `Unsupported field: ${PERMISSION}.`, details: null },
          ]);
        }
        const after = await libraryRow(db.url, lib.id);
        expect(after).toEqual(before);
        expect(after?.[PERMISSION]).toBe(stored);
      },
    );
  });
});
