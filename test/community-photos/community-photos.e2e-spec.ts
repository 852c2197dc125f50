/**
 * POST /libraries/{slug}/photo and GET /libraries/mine/photos (api-spec "Community photo", decisions §4/§5):
 * validation, the upload pipeline's errors, the 3-per-user-per-library limit (also under a race), and what an
 * approved photo changes on the public reads and the statistics.
 */
import request from 'supertest';
import { registerUser } from '../support/auth.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  countRows,
  expectOnlyErrorsAt,
  getAs,
  insertCommunityPhoto,
  PHOTO_LIMIT,
  PHOTO_TOO_LARGE,
  postPhoto,
  setLibraryStatus,
} from '../support/community.js';
import type { TestDatabase } from '../support/database.js';
import {
  GIF_1X1,
  insertLibrary,
  INVALID_PHOTO,
  ISO_MS,
  jpegLookalike,
  mediaFiles,
  NOT_FOUND,
  png,
  UNAUTHORIZED,
  webp,
  type InsertedLibrary,
  onePage,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const EIGHT_MB = 8 * 1024 * 1024;

describe('community photos', () => {
  const { db, t, alice, bob, staff } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', bob: 'user', staff: 'staff' },
  });

  const photoFiles = async (): Promise<string[]> =>
    (await mediaFiles(t))
      .filter((key) => key.startsWith('photos/'))
      .map((key) => key.slice('photos/'.length));
  const photoRows = (userId: number, libraryId: number): Promise<number> =>
    countRows(
      db.url,
      'SELECT count(*)::int AS n FROM library_photos WHERE created_by = $1 AND library_id = $2',
      [userId, libraryId],
    );

  async function moderatePhoto(id: number, status: 'approved' | 'rejected'): Promise<void> {
    const res = await request(t.http)
      .patch(`/api/v1/libraries/moderation/photos/${id}`)
      .set('Authorization', `Bearer ${staff.access}`)
      .send({ status });
    expect(res.status).toBe(200);
  }

  describe('POST /libraries/{slug}/photo', () => {
    it('answers 401 without a token, before reading the upload', async () => {
      const library = await insertLibrary(db.url);
      const res = await postPhoto(t.http, undefined, library.slug);
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
      expect(
        await countRows(
          db.url,
          'SELECT count(*)::int AS n FROM library_photos WHERE library_id = $1',
          [library.id],
        ),
      ).toBe(0);
    });

    it('201: {id, caption, status pending, created_at}; the row is pending and the files are stored', async () => {
      const library = await insertLibrary(db.url);
      const before = (await photoFiles()).length;
      const res = await postPhoto(t.http, alice.access, library.slug, {
        caption: '  Spring shelf  ',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        caption: 'Spring shelf',
        status: 'pending',
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
      const rows = await countRows(
        db.url,
        `SELECT count(*)::int AS n FROM library_photos
         WHERE id = $1 AND library_id = $2 AND created_by = $3 AND status = 'pending' AND caption = 'Spring shelf'`,
        [res.body.id, library.id, alice.id],
      );
      expect(rows).toBe(1);
      expect((await photoFiles()).length).toBe(before + 2);
    });

    it('caption is optional ("" when left out) and may be 200 characters', async () => {
      const library = await insertLibrary(db.url);
      const none = await postPhoto(t.http, alice.access, library.slug);
      expect([none.status, none.body.caption]).toEqual([201, '']);
      const long = await postPhoto(t.http, alice.access, library.slug, {
        caption: 'c'.repeat(200),
      });
      expect([long.status, long.body.caption]).toEqual([201, 'c'.repeat(200)]);
    });

    it.each([
      ['PNG', () => png(40, 30)],
      ['WEBP', () => webp(40, 30)],
    ])('accepts a %s', async (_name, make) => {
      const library = await insertLibrary(db.url);
      const res = await postPhoto(t.http, alice.access, library.slug, {
        photo: {
          data: await make(),
          filename: 'shelf.bin',
          contentType: 'application/octet-stream',
        },
      });
      expect([res.status, res.body.status]).toEqual([201, 'pending']);
    });

    it('no photo is 422 at [file, photo]; nothing stored', async () => {
      const library = await insertLibrary(db.url);
      const res = await postPhoto(t.http, alice.access, library.slug, {
        caption: 'no file',
        photo: null,
      });
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, ['file', 'photo']);
      expect(await photoRows(alice.id, library.id)).toBe(0);
    });

    it('a caption over 200 characters is 422 at [form, caption]; nothing stored', async () => {
      const library = await insertLibrary(db.url);
      const before = await photoFiles();
      const res = await postPhoto(t.http, alice.access, library.slug, { caption: 'c'.repeat(201) });
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, ['form', 'caption']);
      expect(await photoRows(alice.id, library.id)).toBe(0);
      expect(await photoFiles()).toEqual(before);
    });

    it.each([
      ['a GIF', () => GIF_1X1],
      ['text named .jpg', () => Buffer.from('this is not a picture')],
      ['a JPEG signature with noise behind it', () => jpegLookalike(4096)],
    ])('%s is 400 with the invalid-image message; nothing stored', async (_name, make) => {
      const library = await insertLibrary(db.url);
      const before = await photoFiles();
      const res = await postPhoto(t.http, alice.access, library.slug, {
        photo: { data: make(), filename: 'photo.jpg', contentType: 'image/jpeg' },
      });
      expect([res.status, res.body]).toEqual([400, INVALID_PHOTO]);
      expect(await photoRows(alice.id, library.id)).toBe(0);
      expect(await photoFiles()).toEqual(before);
    });

    it('exactly 8 MB passes the size check (and is then judged as an image)', async () => {
      const library = await insertLibrary(db.url);
      const res = await postPhoto(t.http, alice.access, library.slug, {
        photo: { data: jpegLookalike(EIGHT_MB) },
      });
      expect([res.status, res.body]).toEqual([400, INVALID_PHOTO]);
    });

    it.each([
      ['one byte over 8 MB', EIGHT_MB + 1],
      ['9 MB', 9 * 1024 * 1024],
    ])('%s is 413; nothing stored', async (_name, size) => {
      const library = await insertLibrary(db.url);
      const before = await photoFiles();
      const res = await postPhoto(t.http, alice.access, library.slug, {
        photo: { data: jpegLookalike(size) },
      });
      expect([res.status, res.body]).toEqual([413, PHOTO_TOO_LARGE]);
      expect(await photoRows(alice.id, library.id)).toBe(0);
      expect(await photoFiles()).toEqual(before);
    });

    it.each(['pending', 'rejected'] as const)(
      'a %s library is 404, even for its submitter; nothing stored',
      async (status) => {
        const library = await insertLibrary(db.url, { status, created_by: alice.id });
        const before = await photoFiles();
        const res = await postPhoto(t.http, alice.access, library.slug);
        expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
        expect(await photoRows(alice.id, library.id)).toBe(0);
        expect(await photoFiles()).toEqual(before);
      },
    );

    it('a missing library is 404', async () => {
      const res = await postPhoto(t.http, alice.access, 'no-such-library');
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    });
  });

  describe('at most 3 pending or approved photos per user and library', () => {
    it('the 4th is 400 with the limit message, nothing stored', async () => {
      const library = await insertLibrary(db.url);
      for (let index = 0; index < 3; index += 1) {
        expect((await postPhoto(t.http, alice.access, library.slug)).status).toBe(201);
      }
      const before = await photoFiles();
      const res = await postPhoto(t.http, alice.access, library.slug);
      expect([res.status, res.body]).toEqual([400, PHOTO_LIMIT]);
      expect(await photoRows(alice.id, library.id)).toBe(3);
      expect(await photoFiles()).toEqual(before);
    });

    it('approved photos count; a rejected one frees its slot', async () => {
      const library = await insertLibrary(db.url);
      const ids: number[] = [];
      for (let index = 0; index < 3; index += 1)
        ids.push((await postPhoto(t.http, alice.access, library.slug)).body.id);
      await moderatePhoto(ids[0], 'approved');
      await moderatePhoto(ids[1], 'approved');
      expect(await postPhoto(t.http, alice.access, library.slug)).toMatchObject({
        status: 400,
        body: PHOTO_LIMIT,
      });

      await moderatePhoto(ids[2], 'rejected');
      const freed = await postPhoto(t.http, alice.access, library.slug);
      expect([freed.status, freed.body.status]).toEqual([201, 'pending']);
      expect(await postPhoto(t.http, alice.access, library.slug)).toMatchObject({
        status: 400,
        body: PHOTO_LIMIT,
      });
    });

    it('is counted per library and per user', async () => {
      const first = await insertLibrary(db.url);
      const second = await insertLibrary(db.url);
      for (let index = 0; index < 3; index += 1) {
        expect((await postPhoto(t.http, alice.access, first.slug)).status).toBe(201);
      }
      expect((await postPhoto(t.http, alice.access, first.slug)).status).toBe(400);
      expect((await postPhoto(t.http, alice.access, second.slug)).status).toBe(201);
      expect((await postPhoto(t.http, bob.access, first.slug)).status).toBe(201);
    });

    it('photos of a deleted account do not count against anyone', async () => {
      const library = await insertLibrary(db.url);
      for (let index = 0; index < 3; index += 1) {
        await insertCommunityPhoto(db.url, { library_id: library.id, created_by: null });
      }
      expect((await postPhoto(t.http, bob.access, library.slug)).status).toBe(201);
    });

    it('10 parallel POSTs by one user: exactly 3 × 201 and 7 × 400, no orphan files', async () => {
      const racer = await registerUser(t.http);
      const library = await insertLibrary(db.url);
      const before = (await photoFiles()).length;
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          postPhoto(t.http, racer.access, library.slug, { caption: `#${index}` }),
        ),
      );
      const statuses = responses.map((res) => res.status).sort();
      expect(statuses).toEqual([201, 201, 201, 400, 400, 400, 400, 400, 400, 400]);
      for (const res of responses.filter((r) => r.status === 400))
        expect(res.body).toEqual(PHOTO_LIMIT);
      expect(await photoRows(racer.id, library.id)).toBe(3);
      // Main image and thumbnail of each accepted photo, nothing of the refused ones.
      expect((await photoFiles()).length).toBe(before + 6);
    });
  });

  describe('moderation results on the public reads', () => {
    it('pending photos are not in the detail; approved ones are, newest first, in their public shape', async () => {
      const library = await insertLibrary(db.url, {
        photo_key: 'libraries/fx/primary.jpg',
        thumbnail_key: 'libraries/fx/primary_thumb.jpg',
      });
      const older = await postPhoto(t.http, alice.access, library.slug, { caption: 'older' });
      const newer = await postPhoto(t.http, bob.access, library.slug, { caption: 'newer' });
      const stillPending = await postPhoto(t.http, bob.access, library.slug, {
        caption: 'pending',
      });
      const rejected = await postPhoto(t.http, alice.access, library.slug, { caption: 'rejected' });
      expect([older.status, newer.status, stillPending.status, rejected.status]).toEqual([
        201, 201, 201, 201,
      ]);

      const none = await getAs(t.http, `/libraries/${library.slug}`);
      expect([none.status, none.body.photos]).toEqual([200, []]);

      await moderatePhoto(older.body.id, 'approved');
      await moderatePhoto(newer.body.id, 'approved');
      await moderatePhoto(rejected.body.id, 'rejected');

      const detail = await getAs(t.http, `/libraries/${library.slug}`);
      expect(detail.status).toBe(200);
      expect(detail.body.photos).toEqual([
        {
          id: newer.body.id,
          caption: 'newer',
          photo_url: expect.stringMatching(/^\/media\/photos\/.+\.jpg$/),
          thumbnail_url: expect.stringMatching(/^\/media\/photos\/.+\.jpg$/),
          created_at: newer.body.created_at,
        },
        {
          id: older.body.id,
          caption: 'older',
          photo_url: expect.stringMatching(/^\/media\/photos\/.+\.jpg$/),
          thumbnail_url: expect.stringMatching(/^\/media\/photos\/.+\.jpg$/),
          created_at: older.body.created_at,
        },
      ]);
      expect(detail.body.photos[0].photo_url).not.toBe(detail.body.photos[0].thumbnail_url);
      // The library had a primary photo: it keeps it.
      expect(detail.body.photo_url).toBe('/media/libraries/fx/primary.jpg');
      // The approved photo is served.
      const media = await request(t.http).get(detail.body.photos[0].photo_url);
      expect([media.status, media.headers['content-type']]).toEqual([200, 'image/jpeg']);
    });

    it('approving the first photo of a library without a primary photo makes it the primary', async () => {
      const library = await insertLibrary(db.url, { city: 'Primaryton' });
      const first = await postPhoto(t.http, alice.access, library.slug);
      const second = await postPhoto(t.http, bob.access, library.slug);

      const before = await getAs(t.http, `/libraries/${library.slug}`);
      expect([before.body.photo_url, before.body.thumbnail_url]).toEqual(['', '']);

      await moderatePhoto(second.body.id, 'approved');
      const after = await getAs(t.http, `/libraries/${library.slug}`);
      const approved = after.body.photos.find(
        (photo: { id: number }) => photo.id === second.body.id,
      );
      expect(after.body.photo_url).toBe(approved.photo_url);
      expect(after.body.thumbnail_url).toBe(approved.thumbnail_url);

      // A second approval leaves the primary alone.
      await moderatePhoto(first.body.id, 'approved');
      const later = await getAs(t.http, `/libraries/${library.slug}`);
      expect(later.body.photo_url).toBe(approved.photo_url);
      expect(later.body.photos.map((photo: { id: number }) => photo.id).sort()).toEqual(
        [first.body.id, second.body.id].sort(),
      );
    });

    it('only an approved photo puts a library in has_photo=true and in total_with_image', async () => {
      const library = await insertLibrary(db.url, { city: 'Photoville' });
      const hasPhoto = async (): Promise<string[]> =>
        (await getAs(t.http, '/libraries/?city=Photoville&has_photo=true')).body.items.map(
          (item: { slug: string }) => item.slug,
        );
      const withoutPhoto = async (): Promise<string[]> =>
        (await getAs(t.http, '/libraries/?city=Photoville&has_photo=false')).body.items.map(
          (item: { slug: string }) => item.slug,
        );
      // Statistics are cached for 5 minutes per instance: a fresh instance on the same database computes them anew.
      const withImage = async (): Promise<number> => {
        const fresh = await createTestApp({
          databaseUrl: db.url,
          env: { RATE_LIMIT_ENABLED: 'false' },
        });
        try {
          const res = await getAs(fresh.http, '/statistics/');
          expect(res.status).toBe(200);
          return res.body.total_with_image as number;
        } finally {
          await fresh.close();
        }
      };

      const photo = await postPhoto(t.http, alice.access, library.slug);
      expect(photo.status).toBe(201);
      const baseline = await withImage();
      expect(await hasPhoto()).toEqual([]);
      expect(await withoutPhoto()).toEqual([library.slug]);

      await moderatePhoto(photo.body.id, 'approved');
      expect(await hasPhoto()).toEqual([library.slug]);
      expect(await withoutPhoto()).toEqual([]);
      expect(await withImage()).toBe(baseline + 1);
    });
  });

  describe('GET /libraries/mine/photos', () => {
    it('answers 401 without a token', async () => {
      const res = await getAs(t.http, '/libraries/mine/photos');
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
    });

    it("lists only the caller's photos, every status, newest first", async () => {
      const gina = await registerUser(t.http);
      const library: InsertedLibrary = await insertLibrary(db.url, {
        name: 'Gina Shelf',
        city: 'Ginatown',
        country: 'AT',
      });
      const a = await postPhoto(t.http, gina.access, library.slug, { caption: 'a' });
      const b = await postPhoto(t.http, gina.access, library.slug, { caption: 'b' });
      const c = await postPhoto(t.http, gina.access, library.slug, { caption: 'c' });
      await postPhoto(t.http, bob.access, library.slug, { caption: 'not gina' });
      await moderatePhoto(a.body.id, 'approved');
      await moderatePhoto(b.body.id, 'rejected');

      const res = await getAs(t.http, '/libraries/mine/photos', gina.access);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body.pagination).toEqual(onePage(3));
      const ref = {
        id: library.id,
        slug: library.slug,
        name: 'Gina Shelf',
        city: 'Ginatown',
        country: 'AT',
        status: 'approved',
      };
      const url = expect.stringMatching(/^\/media\/photos\/.+\.jpg$/);
      expect(res.body.items).toEqual([
        {
          id: c.body.id,
          library: ref,
          caption: 'c',
          photo_url: url,
          thumbnail_url: url,
          status: 'pending',
          created_at: c.body.created_at,
        },
        {
          id: b.body.id,
          library: ref,
          caption: 'b',
          photo_url: url,
          thumbnail_url: url,
          status: 'rejected',
          created_at: b.body.created_at,
        },
        {
          id: a.body.id,
          library: ref,
          caption: 'a',
          photo_url: url,
          thumbnail_url: url,
          status: 'approved',
          created_at: a.body.created_at,
        },
      ]);

      await setLibraryStatus(db.url, library.id, 'rejected');
      const afterRejection = await getAs(t.http, '/libraries/mine/photos?page_size=1', gina.access);
      expect(afterRejection.body.items[0].library.status).toBe('rejected');
      expect(afterRejection.body.pagination).toMatchObject({
        page_size: 1,
        total: 3,
        total_pages: 3,
        has_next: true,
      });
    });
  });
});

describe('community photo rate limit (write tier, a counter of its own)', () => {
  let db: TestDatabase;
  let t: TestApp;

  useTestSuite(
    {
      env: { RATE_LIMIT_REGISTER: '100', RATE_LIMIT_READ: '100', RATE_LIMIT_WRITE: '2' },
    },
    (s) => ({ db, t } = s),
  );

  it('the third POST in the window is 429 and stores nothing; other write endpoints are unaffected', async () => {
    const user = await registerUser(t.http);
    const library = await insertLibrary(db.url);
    expect((await postPhoto(t.http, user.access, library.slug)).status).toBe(201);
    expect((await postPhoto(t.http, user.access, library.slug)).status).toBe(201);
    const limited = await postPhoto(t.http, user.access, library.slug);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      message: 'Too many requests. Please try again later.',
      details: { retry_after: expect.any(Number) },
    });
    expect(await countRows(db.url, 'SELECT count(*)::int AS n FROM library_photos')).toBe(2);
    const favourite = await request(t.http)
      .post(`/api/v1/libraries/${library.slug}/favourite`)
      .set('Authorization', `Bearer ${user.access}`);
    expect(favourite.status).toBe(201);
  });
});
