/**
 * Staff community-photo moderation (decisions §5): list, status filter, shape, PATCH status (approving the first
 * photo of a library without a primary photo makes it the primary), id validation.
 */
import {
  call,
  countRows,
  expectOnlyErrorsAt,
  getAs,
  insertCommunityPhoto,
  postPhoto,
} from '../support/community.js';
import {
  insertLibraries,
  ISO_MS,
  NOT_FOUND,
  type InsertedLibrary,
  onePage,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

describe('staff photo moderation', () => {
  let withPrimary: InsertedLibrary;
  let withoutPrimary: InsertedLibrary;
  let p1: number;
  let p2: number;
  let p3: number;
  let p4: { id: number; caption: string; created_at: string };

  const ids = (body: { items: { id: number }[] }): number[] => body.items.map((item) => item.id);
  const list = (query = '') => getAs(t.http, `/libraries/moderation/photos${query}`, staff.access);
  const patch = (id: number | string, body: object) =>
    call(t.http, 'patch', `/libraries/moderation/photos/${id}`, staff.access, body);
  const statusOf = (id: number): Promise<number> =>
    countRows(
      db.url,
      "SELECT count(*)::int AS n FROM library_photos WHERE id = $1 AND status = 'pending'",
      [id],
    );

  const { db, t, staff, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', alice: 'user', bob: 'user' },
  });

  beforeAll(async () => {
    [withPrimary, withoutPrimary] = await insertLibraries(db.url, [
      {
        name: 'Has Primary',
        address: 'Marktplatz 1',
        city: 'Berlin',
        country: 'DE',
        photo_key: 'libraries/fx/primary.jpg',
        thumbnail_key: 'libraries/fx/primary_thumb.jpg',
      },
      { name: 'No Primary', address: 'Rue du Lac 3', city: 'Lyon', country: 'FR' },
    ]);
    p1 = await insertCommunityPhoto(db.url, {
      library_id: withPrimary.id,
      created_by: alice.id,
      caption: 'first',
      photo_key: 'photos/fx/one.jpg',
      thumbnail_key: 'photos/fx/one_thumb.jpg',
      created_at: '2026-01-01T00:00:00.000Z',
    });
    p2 = await insertCommunityPhoto(db.url, {
      library_id: withPrimary.id,
      created_by: bob.id,
      status: 'approved',
      created_at: '2026-02-01T00:00:00.000Z',
    });
    p3 = await insertCommunityPhoto(db.url, {
      library_id: withoutPrimary.id,
      created_by: null,
      status: 'rejected',
      created_at: '2026-03-01T00:00:00.000Z',
    });
    // Through the API: the newest one.
    const posted = await postPhoto(t.http, alice.access, withoutPrimary.slug, {
      caption: 'From the API',
    });
    expect(posted.status).toBe(201);
    p4 = posted.body;
  });

  it('lists every photo newest first, in the staff shape', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([p4.id, p3, p2, p1]);
    expect(res.body.pagination).toEqual(onePage(4));
    expect(res.body.items[0]).toEqual({
      id: p4.id,
      library: {
        id: withoutPrimary.id,
        slug: withoutPrimary.slug,
        name: 'No Primary',
        address: 'Rue du Lac 3',
        city: 'Lyon',
        country: 'FR',
        status: 'approved',
      },
      created_by: { id: alice.id, username: alice.username },
      caption: 'From the API',
      photo_url: expect.stringMatching(/^\/media\/photos\/.+\.jpg$/),
      thumbnail_url: expect.stringMatching(/^\/media\/photos\/.+_thumb\.jpg$/),
      status: 'pending',
      created_at: p4.created_at,
    });
    expect(res.body.items[0].created_at).toMatch(ISO_MS);
    expect(res.body.items[1]).toMatchObject({
      id: p3,
      created_by: null,
      status: 'rejected',
      caption: '',
    });
    expect(res.body.items[3]).toEqual({
      id: p1,
      library: {
        id: withPrimary.id,
        slug: withPrimary.slug,
        name: 'Has Primary',
        address: 'Marktplatz 1',
        city: 'Berlin',
        country: 'DE',
        status: 'approved',
      },
      created_by: { id: alice.id, username: alice.username },
      caption: 'first',
      photo_url: '/media/photos/fx/one.jpg',
      thumbnail_url: '/media/photos/fx/one_thumb.jpg',
      status: 'pending',
      created_at: '2026-01-01T00:00:00.000Z',
    });
  });

  it.each([
    ['status=all', () => [p4.id, p3, p2, p1]],
    ['status=pending', () => [p4.id, p1]],
    ['status=approved', () => [p2]],
    ['status=rejected', () => [p3]],
    ['status=pending&page=2&page_size=1', () => [p1]],
  ])('?%s', async (query, expected) => {
    const res = await list(`?${query}`);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(expected());
  });

  it.each(['status=hidden', 'status=Pending'])('?%s is 422 at [query, status]', async (query) => {
    const res = await list(`?${query}`);
    expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
    expectOnlyErrorsAt(res.body, ['query', 'status']);
  });

  describe('PATCH /libraries/moderation/photos/{id}', () => {
    it('approving the first photo of a library without a primary photo makes it the primary', async () => {
      const res = await patch(p4.id, { status: 'approved' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: p4.id, status: 'approved', caption: 'From the API' });
      const detail = await getAs(t.http, `/libraries/${withoutPrimary.slug}`);
      expect(detail.body.photo_url).toBe(res.body.photo_url);
      expect(detail.body.thumbnail_url).toBe(res.body.thumbnail_url);
      expect(detail.body.photos.map((photo: { id: number }) => photo.id)).toEqual([p4.id]);
    });

    it('approving a photo of a library with a primary photo leaves the primary alone', async () => {
      const res = await patch(p1, { status: 'approved' });
      expect([res.status, res.body.status]).toEqual([200, 'approved']);
      const detail = await getAs(t.http, `/libraries/${withPrimary.slug}`);
      expect(detail.body.photo_url).toBe('/media/libraries/fx/primary.jpg');
      expect(detail.body.photos.map((photo: { id: number }) => photo.id)).toEqual([p2, p1]);
    });

    it('rejecting takes an approved photo off the library detail', async () => {
      const res = await patch(p2, { status: 'rejected' });
      expect([res.status, res.body.status]).toEqual([200, 'rejected']);
      const detail = await getAs(t.http, `/libraries/${withPrimary.slug}`);
      expect(detail.body.photos.map((photo: { id: number }) => photo.id)).not.toContain(p2);
      await patch(p2, { status: 'approved' }).expect(200);
    });

    it('withdrawing the approval of the primary photo hands the role on, or leaves the library without one', async () => {
      const [library] = await insertLibraries(db.url, [{ name: 'Promoted' }]);
      const first = (await postPhoto(t.http, alice.access, library.slug)).body as { id: number };
      const second = (await postPhoto(t.http, bob.access, library.slug)).body as { id: number };
      const primary = (await patch(first.id, { status: 'approved' })).body as {
        photo_url: string;
        thumbnail_url: string;
      };
      const next = (await patch(second.id, { status: 'approved' })).body as {
        photo_url: string;
        thumbnail_url: string;
      };
      const shown = async () => {
        const detail = await getAs(t.http, `/libraries/${library.slug}`);
        return [detail.body.photo_url, detail.body.thumbnail_url];
      };
      expect(await shown()).toEqual([primary.photo_url, primary.thumbnail_url]);

      await patch(first.id, { status: 'rejected' }).expect(200);
      expect(await shown()).toEqual([next.photo_url, next.thumbnail_url]);

      await patch(second.id, { status: 'pending' }).expect(200);
      expect(await shown()).toEqual(['', '']);
      const hasPhoto = await getAs(t.http, `/libraries/?has_photo=true&page_size=50`);
      expect(hasPhoto.body.items.map((item: { slug: string }) => item.slug)).not.toContain(
        library.slug,
      );
    });

    it.each([
      ['an unknown status', { status: 'hidden' }],
      ['no status', {}],
    ])('%s is 422 at [body, status] and changes nothing', async (_name, body) => {
      const id = await insertCommunityPhoto(db.url, { library_id: withPrimary.id });
      const res = await patch(id, body);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, ['body', 'status']);
      expect(await statusOf(id)).toBe(1);
    });

    it.each(['abc', '2.5', '-3', '0'])('id %s is 422 at [path, id]', async (id) => {
      const res = await patch(id, { status: 'approved' });
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, ['path', 'id']);
    });

    it.each(['999999', '2147483648'])('a missing id (%s) is 404', async (id) => {
      const res = await patch(id, { status: 'approved' });
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    });
  });
});
