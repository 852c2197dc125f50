/**
 * POST /libraries/{slug}/report (multipart, optional 5 MB photo, approved libraries only) and the caller's own
 * lists: GET /libraries/mine, /libraries/mine/reports, /libraries/mine/photos (decisions.md §4, §5).
 */
import sharp from 'sharp';
import request from 'supertest';
import { bearer, registerUser } from '../support/auth.js';
import { withClient } from '../support/database.js';
import {
  createLibrary,
  fetchMedia,
  INVALID_PHOTO,
  insertLibraries,
  ISO_MS,
  jpeg,
  jpegOfSize,
  mediaFiles,
  multipart,
  NOT_FOUND,
  sortedKeys,
  UNAUTHORIZED,
  withFields,
  type PhotoPart,
  onePage,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const MB = 1024 * 1024;
const REASONS = ['damaged', 'missing', 'incorrect_info', 'inappropriate', 'other'];

describe('reports and the caller’s own lists', () => {
  const ids: Record<string, number> = {};

  const report = (
    slug: string,
    fields: Record<string, string | undefined>,
    token?: string,
    photo: PhotoPart | null = null,
  ) => multipart(request(t.http).post(`/api/v1/libraries/${slug}/report`), fields, photo, token);
  const get = (path: string, token?: string) => {
    const req = request(t.http).get(`/api/v1/libraries${path}`);
    return token ? req.set('Authorization', bearer(token)) : req;
  };
  const reportCount = () =>
    withClient(
      db.url,
      async (client) =>
        (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM reports')).rows[0].n,
    );

  const { db, t, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', bob: 'user' },
  });

  beforeAll(async () => {
    for (const row of await insertLibraries(db.url, [
      { slug: 'approved-a', name: 'Schrank A', city: 'Bonn', country: 'DE' },
      { slug: 'approved-b', name: 'Schrank B', city: 'Graz', country: 'AT' },
      { slug: 'pending-p', status: 'pending', created_by: alice.id },
      { slug: 'rejected-r', status: 'rejected' },
    ])) {
      ids[row.slug] = row.id;
    }
  });

  describe('POST /libraries/{slug}/report', () => {
    it.each(REASONS)(
      'accepts reason %s: 201 {id, reason, created_at}, stored open',
      async (reason) => {
        const res = await report(
          'approved-a',
          { reason, details: `About ${reason}` },
          alice.access,
        );
        expect(res.status).toBe(201);
        expect(res.body).toEqual({
          id: expect.any(Number),
          reason,
          created_at: expect.stringMatching(ISO_MS),
        });
        const row = await withClient(
          db.url,
          async (client) =>
            (
              await client.query(
                'SELECT library_id, created_by, reason, details, status, photo_key FROM reports WHERE id = $1',
                [res.body.id],
              )
            ).rows[0],
        );
        expect(row).toEqual({
          library_id: ids['approved-a'],
          created_by: alice.id,
          reason,
          details: `About ${reason}`,
          status: 'open',
          photo_key: null,
        });
      },
    );

    it('answers 401 anonymously', async () => {
      const before = await reportCount();
      const res = await report('approved-a', { reason: 'damaged' });
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
      expect(await reportCount()).toBe(before);
    });

    it.each([
      ['an unknown reason', { reason: 'spam' }, 'reason'],
      ['no reason', { details: 'x' }, 'reason'],
      ['details over 2000 characters', { reason: 'other', details: 'd'.repeat(2001) }, 'details'],
      ['a NUL character in details', { reason: 'other', details: 'a\u0000b' }, 'details'],
    ])('refuses %s with 422', async (_label, fields, field) => {
      const before = await reportCount();
      const res = await report('approved-a', fields, alice.access);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      for (const error of res.body.details.errors) expect(error.loc).toEqual(['form', field]);
      expect(await reportCount()).toBe(before);
    });

    it('accepts details of exactly 2000 characters', async () => {
      expect(
        (await report('approved-a', { reason: 'other', details: 'd'.repeat(2000) }, alice.access))
          .status,
      ).toBe(201);
    });

    it.each(['pending-p', 'rejected-r', 'no-such-library'])('answers 404 for %s', async (slug) => {
      const before = await reportCount();
      const res = await report(slug, { reason: 'damaged' }, alice.access);
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
      expect(await reportCount()).toBe(before);
    });

    it('takes an optional photo through the pipeline: stored as JPEG without EXIF', async () => {
      const res = await report('approved-b', { reason: 'damaged' }, bob.access, {
        data: await jpeg(900, 600, { exif: true }),
      });
      expect(res.status).toBe(201);
      const { photo_key: photoKey } = await withClient(
        db.url,
        async (client) =>
          (await client.query('SELECT photo_key FROM reports WHERE id = $1', [res.body.id]))
            .rows[0],
      );
      expect(photoKey).toMatch(/^reports\/[0-9a-f]{2}\/[0-9a-f-]{36}\.jpg$/);
      const meta = await sharp(await fetchMedia(t.http, `/media/${photoKey}`)).metadata();
      expect([meta.format, meta.width, meta.exif]).toEqual(['jpeg', 900, undefined]);
    });

    it('accepts a 5 MB photo and refuses one byte more with 413 "Photo must be 5MB or smaller."', async () => {
      expect(
        (
          await report('approved-b', { reason: 'damaged' }, bob.access, {
            data: await jpegOfSize(5 * MB),
          })
        ).status,
      ).toBe(201);
      const before = await reportCount();
      const files = await mediaFiles(t);
      const res = await report('approved-b', { reason: 'damaged' }, bob.access, {
        data: await jpegOfSize(5 * MB + 1),
      });
      expect([res.status, res.body]).toEqual([
        413,
        { message: 'Photo must be 5MB or smaller.', details: null },
      ]);
      expect(await reportCount()).toBe(before);
      expect(await mediaFiles(t)).toEqual(files);
    });

    it('refuses a photo that is not an image with 400', async () => {
      const before = await reportCount();
      const files = await mediaFiles(t);
      const res = await report('approved-b', { reason: 'damaged' }, bob.access, {
        data: Buffer.from('GIF89a but not really'),
      });
      expect([res.status, res.body]).toEqual([400, INVALID_PHOTO]);
      expect(await reportCount()).toBe(before);
      expect(await mediaFiles(t)).toEqual(files);
    });
  });

  describe('GET /libraries/mine/reports', () => {
    it('lists the caller’s reports newest first as {id, library, reason, status, created_at}', async () => {
      const carol = await registerUser(t.http);
      const first = await report('approved-a', { reason: 'missing' }, carol.access).expect(201);
      const second = await report('approved-b', { reason: 'other' }, carol.access).expect(201);
      await withClient(db.url, (client) =>
        client.query(`UPDATE reports SET status = 'resolved' WHERE id = $1`, [first.body.id]),
      );
      const res = await get('/mine/reports', carol.access).expect(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        items: [
          {
            id: second.body.id,
            library: {
              id: ids['approved-b'],
              slug: 'approved-b',
              name: 'Schrank B',
              city: 'Graz',
              country: 'AT',
              status: 'approved',
            },
            reason: 'other',
            status: 'open',
            created_at: second.body.created_at,
          },
          {
            id: first.body.id,
            library: {
              id: ids['approved-a'],
              slug: 'approved-a',
              name: 'Schrank A',
              city: 'Bonn',
              country: 'DE',
              status: 'approved',
            },
            reason: 'missing',
            status: 'resolved',
            created_at: first.body.created_at,
          },
        ],
        pagination: onePage(2),
      });
      const paged = await get('/mine/reports?page_size=1&page=2', carol.access).expect(200);
      expect(paged.body.items.map((item: { id: number }) => item.id)).toEqual([first.body.id]);
      expect(paged.body.pagination).toMatchObject({
        total: 2,
        total_pages: 2,
        has_previous: true,
        has_next: false,
      });
    });

    it('answers 401 anonymously', async () => {
      expect((await get('/mine/reports').expect(401)).body).toEqual(UNAUTHORIZED);
    });
  });

  describe('GET /libraries/mine/photos', () => {
    it('lists the caller’s community photos newest first with their status', async () => {
      const dave = await registerUser(t.http);
      const [older, newer] = await withClient(db.url, async (client) => {
        const insert = `INSERT INTO library_photos (library_id, created_by, caption, photo_key, thumbnail_key, status, created_at)
                        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`;
        const a = await client.query(insert, [
          ids['approved-a'],
          dave.id,
          'Front',
          'libraries/d1/a.jpg',
          'libraries/d1/a_thumb.jpg',
          'approved',
          '2026-01-01T10:00:00.5Z',
        ]);
        const b = await client.query(insert, [
          ids['approved-b'],
          dave.id,
          '',
          'libraries/d2/b.jpg',
          'libraries/d2/b_thumb.jpg',
          'pending',
          '2026-02-01T10:00:00Z',
        ]);
        await client.query(insert, [
          ids['approved-b'],
          bob.id,
          'Not Dave’s',
          'libraries/d3/c.jpg',
          'libraries/d3/c_thumb.jpg',
          'pending',
          '2026-03-01T10:00:00Z',
        ]);
        return [a.rows[0].id as number, b.rows[0].id as number];
      });
      const res = await get('/mine/photos', dave.access).expect(200);
      expect(res.body).toEqual({
        items: [
          {
            id: newer,
            library: {
              id: ids['approved-b'],
              slug: 'approved-b',
              name: 'Schrank B',
              city: 'Graz',
              country: 'AT',
              status: 'approved',
            },
            caption: '',
            photo_url: '/media/libraries/d2/b.jpg',
            thumbnail_url: '/media/libraries/d2/b_thumb.jpg',
            status: 'pending',
            created_at: '2026-02-01T10:00:00.000Z',
          },
          {
            id: older,
            library: {
              id: ids['approved-a'],
              slug: 'approved-a',
              name: 'Schrank A',
              city: 'Bonn',
              country: 'DE',
              status: 'approved',
            },
            caption: 'Front',
            photo_url: '/media/libraries/d1/a.jpg',
            thumbnail_url: '/media/libraries/d1/a_thumb.jpg',
            status: 'approved',
            created_at: '2026-01-01T10:00:00.500Z',
          },
        ],
        pagination: onePage(2),
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    it('answers 401 anonymously', async () => {
      expect((await get('/mine/photos').expect(401)).body).toEqual(UNAUTHORIZED);
    });
  });

  describe('GET /libraries/mine', () => {
    it('lists the caller’s submissions, pending first then newest, with status, rejection_reason, permission, pending_changes', async () => {
      const erin = await registerUser(t.http);
      const a = await createLibrary(t.http, erin.access, {
        city: 'Aachen',
        mapdb_submission_allowed: 'true',
      });
      const b = await createLibrary(t.http, erin.access, { city: 'Bremen' });
      const c = await createLibrary(t.http, erin.access, { city: 'Celle' });
      const d = await createLibrary(t.http, erin.access, {
        city: 'Dresden',
        mapdb_submission_allowed: 'false',
      });
      await withClient(db.url, async (client) => {
        await client.query(
          `UPDATE libraries SET status = 'approved', pending_changes = '{"name": "Later"}' WHERE id = $1`,
          [b.id],
        );
        await client.query(
          `UPDATE libraries SET status = 'rejected', rejection_reason = 'Duplicate.' WHERE id = $1`,
          [c.id],
        );
      });
      await createLibrary(t.http, bob.access, { city: 'Someone else' });

      const res = await get('/mine', erin.access).expect(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body.pagination).toEqual(onePage(4));
      const items = res.body.items as Record<string, unknown>[];
      for (const item of items) {
        expect(sortedKeys(item)).toEqual(
          withFields('mapdb_submission_allowed', 'pending_changes', 'rejection_reason', 'status'),
        );
        expect(item.created_at).toMatch(ISO_MS);
      }
      expect(
        items.map((item) => [
          item.id,
          item.status,
          item.rejection_reason,
          item.mapdb_submission_allowed,
          item.pending_changes,
        ]),
      ).toEqual([
        [d.id, 'pending', '', false, null],
        [a.id, 'pending', '', true, null],
        [c.id, 'rejected', 'Duplicate.', false, null],
        [b.id, 'approved', '', false, { name: 'Later' }],
      ]);
      const { mapdb_submission_allowed: _permission, ...itemOfD } = d;
      expect(items[0]).toEqual({
        ...itemOfD,
        status: 'pending',
        rejection_reason: '',
        mapdb_submission_allowed: false,
        pending_changes: null,
      });

      const second = await get('/mine?page_size=3&page=2', erin.access).expect(200);
      expect(second.body.items.map((item: { id: number }) => item.id)).toEqual([b.id]);
      expect(second.body.pagination).toMatchObject({
        page: 2,
        total: 4,
        total_pages: 2,
        has_previous: true,
        has_next: false,
      });
      expect(
        (await get('/mine?page_size=51', erin.access).expect(422)).body.details.errors[0].loc,
      ).toEqual(['query', 'page_size']);
    });

    it('is empty for a user without submissions and 401 anonymously', async () => {
      const frank = await registerUser(t.http);
      expect((await get('/mine', frank.access).expect(200)).body.items).toEqual([]);
      expect((await get('/mine').expect(401)).body).toEqual(UNAUTHORIZED);
      expect((await get('/mine/').expect(401)).body).toEqual(UNAUTHORIZED);
    });
  });
});
