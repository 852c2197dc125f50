/** Staff report moderation (decisions §5): list, filters, shape, PATCH status, id validation. */
import request from 'supertest';
import { call, countRows, expectOnlyErrorsAt, getAs, insertReport } from '../support/community.js';
import {
  defaultPhoto,
  insertLibraries,
  ISO_MS,
  multipart,
  NOT_FOUND,
  type InsertedLibrary,
  onePage,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

describe('staff report moderation', () => {
  let berlin: InsertedLibrary;
  let lyon: InsertedLibrary;
  let r1: number;
  let r2: number;
  let r3: number;
  let r4: number;
  let r5: { id: number; created_at: string };

  const ids = (body: { items: { id: number }[] }): number[] => body.items.map((item) => item.id);
  const list = (query = '') => getAs(t.http, `/libraries/moderation/reports${query}`, staff.access);
  const patch = (id: number | string, body: object) =>
    call(t.http, 'patch', `/libraries/moderation/reports/${id}`, staff.access, body);

  const { db, t, staff, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', alice: 'user', bob: 'user' },
  });

  beforeAll(async () => {
    [berlin, lyon] = await insertLibraries(db.url, [
      { name: 'Berlin Shelf', address: 'Marktplatz 1', city: 'Berlin', country: 'DE' },
      { name: 'Lyon Box', address: 'Rue du Lac 3', city: 'Lyon', country: 'FR', status: 'pending' },
    ]);
    r1 = await insertReport(db.url, {
      library_id: berlin.id,
      created_by: alice.id,
      reason: 'damaged',
      details: 'The door is broken.',
      created_at: '2026-01-01T00:00:00.000Z',
    });
    r2 = await insertReport(db.url, {
      library_id: berlin.id,
      created_by: bob.id,
      reason: 'missing',
      status: 'resolved',
      created_at: '2026-02-01T00:00:00.000Z',
    });
    r3 = await insertReport(db.url, {
      library_id: lyon.id,
      created_by: null,
      reason: 'other',
      status: 'dismissed',
      created_at: '2026-03-01T00:00:00.000Z',
    });
    r4 = await insertReport(db.url, {
      library_id: lyon.id,
      created_by: alice.id,
      reason: 'damaged',
      created_at: '2026-04-01T00:00:00.000Z',
    });
    // Through the API, with a photo: the newest one.
    const created = await multipart(
      request(t.http).post(`/api/v1/libraries/${berlin.slug}/report`),
      { reason: 'incorrect_info', details: 'Wrong street.' },
      { data: await defaultPhoto() },
      bob.access,
    );
    expect(created.status).toBe(201);
    r5 = created.body;
  });

  it('lists every report newest first, in the staff shape', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([r5.id, r4, r3, r2, r1]);
    expect(res.body.pagination).toEqual(onePage(5));
    const berlinRef = {
      id: berlin.id,
      slug: berlin.slug,
      name: 'Berlin Shelf',
      address: 'Marktplatz 1',
      city: 'Berlin',
      country: 'DE',
      status: 'approved',
    };
    const lyonRef = {
      id: lyon.id,
      slug: lyon.slug,
      name: 'Lyon Box',
      address: 'Rue du Lac 3',
      city: 'Lyon',
      country: 'FR',
      status: 'pending',
    };
    expect(res.body.items[0]).toEqual({
      id: r5.id,
      library: berlinRef,
      created_by: { id: bob.id, username: bob.username },
      reason: 'incorrect_info',
      details: 'Wrong street.',
      photo_url: expect.stringMatching(/^\/media\/reports\/.+\.jpg$/),
      status: 'open',
      created_at: r5.created_at,
    });
    expect(res.body.items[0].created_at).toMatch(ISO_MS);
    expect(res.body.items[2]).toEqual({
      id: r3,
      library: lyonRef,
      created_by: null,
      reason: 'other',
      details: '',
      photo_url: '',
      status: 'dismissed',
      created_at: '2026-03-01T00:00:00.000Z',
    });
    expect(res.body.items[4]).toEqual({
      id: r1,
      library: berlinRef,
      created_by: { id: alice.id, username: alice.username },
      reason: 'damaged',
      details: 'The door is broken.',
      photo_url: '',
      status: 'open',
      created_at: '2026-01-01T00:00:00.000Z',
    });
  });

  it.each([
    ['status=all', () => [r5.id, r4, r3, r2, r1]],
    ['status=open', () => [r5.id, r4, r1]],
    ['status=resolved', () => [r2]],
    ['status=dismissed', () => [r3]],
    ['reason=all', () => [r5.id, r4, r3, r2, r1]],
    ['reason=damaged', () => [r4, r1]],
    ['reason=incorrect_info', () => [r5.id]],
    ['reason=inappropriate', () => []],
    ['status=open&reason=damaged', () => [r4, r1]],
    ['status=resolved&reason=damaged', () => []],
  ])('?%s', async (query, expected) => {
    const res = await list(`?${query}`);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(expected());
  });

  it('paginates', async () => {
    const res = await list('?page=2&page_size=2');
    expect(ids(res.body)).toEqual([r3, r2]);
    expect(res.body.pagination).toEqual({
      page: 2,
      page_size: 2,
      total: 5,
      total_pages: 3,
      has_next: true,
      has_previous: true,
    });
  });

  it.each([
    ['status=closed', ['query', 'status']],
    ['status=OPEN', ['query', 'status']],
    ['reason=spam', ['query', 'reason']],
  ])('?%s is 422', async (query, loc) => {
    const res = await list(`?${query}`);
    expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
    expectOnlyErrorsAt(res.body, loc);
  });

  describe('PATCH /libraries/moderation/reports/{id}', () => {
    it('resolves and dismisses, answering the report', async () => {
      const id = await insertReport(db.url, {
        library_id: berlin.id,
        created_by: alice.id,
        reason: 'missing',
      });
      const resolved = await patch(id, { status: 'resolved' });
      expect(resolved.status).toBe(200);
      expect(resolved.body).toEqual({
        id,
        library: expect.objectContaining({ id: berlin.id, slug: berlin.slug }),
        created_by: { id: alice.id, username: alice.username },
        reason: 'missing',
        details: '',
        photo_url: '',
        status: 'resolved',
        created_at: expect.stringMatching(ISO_MS),
      });
      expect(ids((await list('?status=open')).body)).not.toContain(id);
      expect(ids((await list('?status=resolved')).body)).toContain(id);

      const dismissed = await patch(id, { status: 'dismissed' });
      expect([dismissed.status, dismissed.body.status]).toEqual([200, 'dismissed']);
      expect(
        await countRows(
          db.url,
          "SELECT count(*)::int AS n FROM reports WHERE id = $1 AND status = 'dismissed'",
          [id],
        ),
      ).toBe(1);
    });

    it('the reporter sees the new status in /libraries/mine/reports', async () => {
      const res = await patch(r5.id, { status: 'resolved' });
      expect(res.status).toBe(200);
      const mine = await getAs(t.http, '/libraries/mine/reports', bob.access);
      expect(mine.body.items.find((item: { id: number }) => item.id === r5.id)?.status).toBe(
        'resolved',
      );
      await patch(r5.id, { status: 'open' }).expect(200);
    });

    it.each([
      ['an unknown status', { status: 'closed' }],
      ['no status', {}],
    ])('%s is 422 at [body, status] and changes nothing', async (_name, body) => {
      const res = await patch(r1, body);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, ['body', 'status']);
      expect(
        await countRows(
          db.url,
          "SELECT count(*)::int AS n FROM reports WHERE id = $1 AND status = 'open'",
          [r1],
        ),
      ).toBe(1);
    });

    it.each(['abc', '1.5', '-1', '0', '1e3'])('id %s is 422 at [path, id]', async (id) => {
      const res = await patch(id, { status: 'resolved' });
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, ['path', 'id']);
    });

    it.each(['999999', '2147483647', '2147483648', '99999999999999'])(
      'a missing id (%s) is 404',
      async (id) => {
        const res = await patch(id, { status: 'resolved' });
        expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
      },
    );
  });
});
