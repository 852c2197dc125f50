/**
 * Favourites (api-spec "Favourites", decisions §4): list, add, remove, visibility of non-approved libraries,
 * is_favourited on the public reads, a race of parallel adds, and the shared favourite rate-limit counter.
 */
import request from 'supertest';
import { bearer, registerUser, type RegisteredUser } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import { countRows, expectOnlyErrorsAt, getAs, setLibraryStatus } from '../support/community.js';
import {
  insertLibraries,
  insertLibrary,
  ISO_MS,
  ITEM_FIELDS,
  NOT_FOUND,
  sortedKeys,
  UNAUTHORIZED,
  type InsertedLibrary,
  BLANK_OPTIONAL_FIELDS,
  EMPTY_PAGE,
  onePage,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const ADDED = { message: 'Library added to favourites.' };
const ALREADY = { message: 'Library is already in your favourites.' };

function favourite(t: TestApp, slug: string, token?: string): request.Test {
  const req = request(t.http).post(`/api/v1/libraries/${slug}/favourite`);
  return token ? req.set('Authorization', bearer(token)) : req;
}

function unfavourite(t: TestApp, slug: string, token?: string): request.Test {
  const req = request(t.http).delete(`/api/v1/libraries/${slug}/favourite`);
  return token ? req.set('Authorization', bearer(token)) : req;
}

const slugsOf = (body: { items: { slug: string }[] }): string[] =>
  body.items.map((item) => item.slug);

describe('favourites', () => {
  const { db, t, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', bob: 'user' },
  });

  const favouriteRows = (userId: number, libraryId?: number): Promise<number> =>
    libraryId === undefined
      ? countRows(db.url, 'SELECT count(*)::int AS n FROM favourites WHERE user_id = $1', [userId])
      : countRows(
          db.url,
          'SELECT count(*)::int AS n FROM favourites WHERE user_id = $1 AND library_id = $2',
          [userId, libraryId],
        );

  describe('authentication', () => {
    let library: InsertedLibrary;

    beforeAll(async () => {
      library = await insertLibrary(db.url);
    });

    it.each([
      ['GET /libraries/favourites', () => getAs(t.http, '/libraries/favourites')],
      ['POST /libraries/{slug}/favourite', () => favourite(t, library.slug)],
      ['DELETE /libraries/{slug}/favourite', () => unfavourite(t, library.slug)],
      ['POST with a bad token', () => favourite(t, library.slug, 'not-a-jwt')],
      ['GET with a bad token', () => getAs(t.http, '/libraries/favourites', 'not-a-jwt')],
    ])('%s answers 401 without a valid token', async (_name, send) => {
      const res = await send();
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
      expect(
        await countRows(db.url, 'SELECT count(*)::int AS n FROM favourites WHERE library_id = $1', [
          library.id,
        ]),
      ).toBe(0);
    });
  });

  describe('POST and DELETE', () => {
    it('adds with 201, then answers 200 while it is already a favourite; one row', async () => {
      const library = await insertLibrary(db.url);
      const first = await favourite(t, library.slug, alice.access);
      expect([first.status, first.body]).toEqual([201, ADDED]);
      const second = await favourite(t, library.slug, alice.access);
      expect([second.status, second.body]).toEqual([200, ALREADY]);
      expect(await favouriteRows(alice.id, library.id)).toBe(1);
      expect(first.headers['cache-control']).toBe('private, no-store');
    });

    it('accepts the path with a trailing slash too', async () => {
      const library = await insertLibrary(db.url);
      const added = await request(t.http)
        .post(`/api/v1/libraries/${library.slug}/favourite/`)
        .set('Authorization', bearer(alice.access));
      expect([added.status, added.body]).toEqual([201, ADDED]);
      const removed = await request(t.http)
        .delete(`/api/v1/libraries/${library.slug}/favourite/`)
        .set('Authorization', bearer(alice.access));
      expect(removed.status).toBe(204);
      expect(await favouriteRows(alice.id, library.id)).toBe(0);
    });

    it("one user's favourite is not another's", async () => {
      const library = await insertLibrary(db.url);
      expect((await favourite(t, library.slug, alice.access)).status).toBe(201);
      const res = await favourite(t, library.slug, bob.access);
      expect([res.status, res.body]).toEqual([201, ADDED]);
      expect(await favouriteRows(bob.id, library.id)).toBe(1);
    });

    it('DELETE answers 204 with an empty body, and again when nothing is left to remove', async () => {
      const library = await insertLibrary(db.url);
      await favourite(t, library.slug, alice.access).expect(201);
      await favourite(t, library.slug, bob.access).expect(201);

      const removed = await unfavourite(t, library.slug, alice.access);
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
      expect(await favouriteRows(alice.id, library.id)).toBe(0);
      expect(await favouriteRows(bob.id, library.id)).toBe(1);

      const again = await unfavourite(t, library.slug, alice.access);
      expect([again.status, again.text]).toEqual([204, '']);

      const readded = await favourite(t, library.slug, alice.access);
      expect([readded.status, readded.body]).toEqual([201, ADDED]);
    });

    it('DELETE of a library never favourited is 204', async () => {
      const library = await insertLibrary(db.url);
      const res = await unfavourite(t, library.slug, alice.access);
      expect([res.status, res.text]).toEqual([204, '']);
    });

    describe.each(['pending', 'rejected'] as const)('a %s library', (status) => {
      it('is 404 for POST and DELETE, and nothing is stored', async () => {
        const library = await insertLibrary(db.url, { status });
        const added = await favourite(t, library.slug, alice.access);
        expect([added.status, added.body]).toEqual([404, NOT_FOUND]);
        const removed = await unfavourite(t, library.slug, alice.access);
        expect([removed.status, removed.body]).toEqual([404, NOT_FOUND]);
        expect(await favouriteRows(alice.id, library.id)).toBe(0);
      });

      it("is 404 even for its own submitter's favourite", async () => {
        const library = await insertLibrary(db.url, { status, created_by: alice.id });
        const res = await favourite(t, library.slug, alice.access);
        expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
      });

      it('that was a favourite while approved: DELETE is 404 and the row stays until it is approved again', async () => {
        const library = await insertLibrary(db.url);
        await favourite(t, library.slug, alice.access).expect(201);
        await setLibraryStatus(db.url, library.id, status);
        const res = await unfavourite(t, library.slug, alice.access);
        expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
        expect(await favouriteRows(alice.id, library.id)).toBe(1);

        await setLibraryStatus(db.url, library.id, 'approved');
        const again = await favourite(t, library.slug, alice.access);
        expect([again.status, again.body]).toEqual([200, ALREADY]);
      });
    });

    it('a slug that does not exist is 404 for POST and DELETE', async () => {
      const added = await favourite(t, 'no-such-library', alice.access);
      expect([added.status, added.body]).toEqual([404, NOT_FOUND]);
      const removed = await unfavourite(t, 'no-such-library', alice.access);
      expect([removed.status, removed.body]).toEqual([404, NOT_FOUND]);
    });

    it('20 parallel POSTs by one user store exactly one row: one 201, nineteen 200, never a 500', async () => {
      const library = await insertLibrary(db.url);
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => favourite(t, library.slug, alice.access)),
      );
      const statuses = responses.map((res) => res.status).sort();
      expect(statuses).toEqual([...Array(19).fill(200), 201]);
      for (const res of responses) expect(res.body).toEqual(res.status === 201 ? ADDED : ALREADY);
      expect(await favouriteRows(alice.id, library.id)).toBe(1);
    });

    it('20 parallel DELETEs after a POST all answer 204 and leave no row', async () => {
      const library = await insertLibrary(db.url);
      await favourite(t, library.slug, alice.access).expect(201);
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => unfavourite(t, library.slug, alice.access)),
      );
      expect(responses.map((res) => res.status)).toEqual(Array(20).fill(204));
      expect(await favouriteRows(alice.id, library.id)).toBe(0);
    });
  });

  describe('GET /libraries/favourites', () => {
    let carol: RegisteredUser;
    let libraries: InsertedLibrary[];

    beforeAll(async () => {
      carol = await registerUser(t.http);
      // Created oldest first (a, b, c, d): favourited in another order (c, a, d, b) to tell the two orders apart.
      libraries = await insertLibraries(db.url, [
        { name: 'Alpha', created_at: '2026-01-01T00:00:00.000Z' },
        { name: 'Bravo', created_at: '2026-02-01T00:00:00.000Z' },
        { name: 'Charlie', created_at: '2026-03-01T00:00:00.000Z' },
        { name: 'Delta', created_at: '2026-04-01T00:00:00.000Z' },
      ]);
      const [a, b, c, d] = libraries;
      for (const library of [c, a, d, b])
        await favourite(t, library.slug, carol.access).expect(201);
      // Someone else's favourite never shows in carol's list.
      const other = await insertLibrary(db.url, { name: 'Echo' });
      await favourite(t, other.slug, bob.access).expect(201);
    });

    afterEach(async () => {
      for (const library of libraries) await setLibraryStatus(db.url, library.id, 'approved');
    });

    it('lists newest favourited first, as 23-field items with is_favourited true', async () => {
      const res = await getAs(t.http, '/libraries/favourites', carol.access);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const [a, b, c, d] = libraries;
      expect(slugsOf(res.body)).toEqual([b.slug, d.slug, a.slug, c.slug]);
      expect(res.body.pagination).toEqual(onePage(4));
      for (const item of res.body.items) {
        expect(sortedKeys(item)).toEqual(ITEM_FIELDS);
        expect(item.is_favourited).toBe(true);
      }
      expect(res.body.items[0]).toEqual({
        id: b.id,
        slug: b.slug,
        name: 'Bravo',
        description: '',
        photo_url: '',
        thumbnail_url: '',
        lat: 52.52,
        lng: 13.405,
        ...BLANK_OPTIONAL_FIELDS,
        city: 'Berlin',
        country: 'DE',
        created_at: '2026-02-01T00:00:00.000Z',
        is_favourited: true,
      });
      expect(res.body.items[0].created_at).toMatch(ISO_MS);
    });

    it('paginates', async () => {
      const [a, b, c, d] = libraries;
      const first = await getAs(t.http, '/libraries/favourites?page=1&page_size=3', carol.access);
      expect(slugsOf(first.body)).toEqual([b.slug, d.slug, a.slug]);
      expect(first.body.pagination).toEqual({
        page: 1,
        page_size: 3,
        total: 4,
        total_pages: 2,
        has_next: true,
        has_previous: false,
      });
      const second = await getAs(t.http, '/libraries/favourites?page=2&page_size=3', carol.access);
      expect(slugsOf(second.body)).toEqual([c.slug]);
      expect(second.body.pagination).toEqual({
        page: 2,
        page_size: 3,
        total: 4,
        total_pages: 2,
        has_next: false,
        has_previous: true,
      });
      const past = await getAs(t.http, '/libraries/favourites?page=9&page_size=3', carol.access);
      expect(past.body.pagination.page).toBe(2);
      expect(slugsOf(past.body)).toEqual([c.slug]);
      // An offset beyond 32 bits (the statement's offset is a bigint) is still the last page, not a 500.
      const far = await getAs(
        t.http,
        '/libraries/favourites?page=3000000000&page_size=3',
        carol.access,
      );
      expect([far.status, far.body.pagination.page, slugsOf(far.body)]).toEqual([200, 2, [c.slug]]);
    });

    it.each([
      ['page_size=0', ['query', 'page_size']],
      ['page_size=51', ['query', 'page_size']],
      ['page=0', ['query', 'page']],
      ['page=x', ['query', 'page']],
    ])('%s is 422', async (query, loc) => {
      const res = await getAs(t.http, `/libraries/favourites?${query}`, carol.access);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expectOnlyErrorsAt(res.body, loc);
    });

    it.each(['pending', 'rejected'] as const)(
      'a favourite whose library becomes %s leaves the list, and returns when it is approved again',
      async (status) => {
        const [a, b, c, d] = libraries;
        await setLibraryStatus(db.url, d.id, status);
        const hidden = await getAs(t.http, '/libraries/favourites', carol.access);
        expect(slugsOf(hidden.body)).toEqual([b.slug, a.slug, c.slug]);
        expect(hidden.body.pagination.total).toBe(3);

        await setLibraryStatus(db.url, d.id, 'approved');
        const back = await getAs(t.http, '/libraries/favourites', carol.access);
        expect(slugsOf(back.body)).toEqual([b.slug, d.slug, a.slug, c.slug]);
      },
    );

    it('a user without favourites gets an empty page', async () => {
      const dave = await registerUser(t.http);
      const res = await getAs(t.http, '/libraries/favourites', dave.access);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(EMPTY_PAGE);
    });

    it('removing one takes it off the list', async () => {
      const erin = await registerUser(t.http);
      const [a, b] = libraries;
      await favourite(t, a.slug, erin.access).expect(201);
      await favourite(t, b.slug, erin.access).expect(201);
      await unfavourite(t, b.slug, erin.access).expect(204);
      const res = await getAs(t.http, '/libraries/favourites', erin.access);
      expect(slugsOf(res.body)).toEqual([a.slug]);
    });
  });

  describe('is_favourited on the public reads', () => {
    let library: InsertedLibrary;
    let frank: RegisteredUser;

    beforeAll(async () => {
      frank = await registerUser(t.http);
      library = await insertLibrary(db.url, { name: 'Favourite Shelf', city: 'Favourville' });
      await favourite(t, library.slug, frank.access).expect(201);
    });

    const flag = (body: { items: { slug: string; is_favourited: boolean }[] }) =>
      body.items.find((item) => item.slug === library.slug)?.is_favourited;

    it('is true for the user who favourited it, in detail, list and latest', async () => {
      const detail = await getAs(t.http, `/libraries/${library.slug}`, frank.access);
      expect([detail.status, detail.body.is_favourited]).toEqual([200, true]);
      const list = await getAs(t.http, '/libraries/?city=Favourville', frank.access);
      expect(flag(list.body)).toBe(true);
      const latest = await getAs(t.http, '/libraries/latest?limit=50', frank.access);
      expect(flag(latest.body)).toBe(true);
    });

    it('is false for another user and for anonymous readers', async () => {
      for (const token of [bob.access, undefined]) {
        const detail = await getAs(t.http, `/libraries/${library.slug}`, token);
        expect([detail.status, detail.body.is_favourited]).toEqual([200, false]);
        const list = await getAs(t.http, '/libraries/?city=Favourville', token);
        expect(flag(list.body)).toBe(false);
        const latest = await getAs(t.http, '/libraries/latest?limit=50', token);
        expect(flag(latest.body)).toBe(false);
      }
    });

    it('turns false again after DELETE', async () => {
      const other = await insertLibrary(db.url);
      await favourite(t, other.slug, frank.access).expect(201);
      expect(
        (await getAs(t.http, `/libraries/${other.slug}`, frank.access)).body.is_favourited,
      ).toBe(true);
      await unfavourite(t, other.slug, frank.access).expect(204);
      expect(
        (await getAs(t.http, `/libraries/${other.slug}`, frank.access)).body.is_favourited,
      ).toBe(false);
    });
  });
});

describe('favourites rate limit (write tier, one counter for POST and DELETE)', () => {
  let user: RegisteredUser;
  let library: InsertedLibrary;

  // Default write tier (10 per 300 s); registration is raised only so the fixtures can sign up.
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_REGISTER: '100' } });

  beforeAll(async () => {
    user = await registerUser(t.http);
    library = await insertLibrary(db.url);
  });

  it('6 POSTs and 4 DELETEs use up the window; the 11th of either is 429 with retry_after', async () => {
    for (let index = 0; index < 6; index += 1) {
      const res = await favourite(t, library.slug, user.access);
      expect(res.status).toBe(index === 0 ? 201 : 200);
    }
    for (let index = 0; index < 4; index += 1) {
      expect((await unfavourite(t, library.slug, user.access)).status).toBe(204);
    }
    const post = await favourite(t, library.slug, user.access);
    expect(post.status).toBe(429);
    expect(post.body).toEqual({
      message: 'Too many requests. Please try again later.',
      details: { retry_after: expect.any(Number) },
    });
    expect(post.body.details.retry_after).toBeGreaterThanOrEqual(1);
    expect(post.body.details.retry_after).toBeLessThanOrEqual(300);

    const del = await unfavourite(t, library.slug, user.access);
    expect([del.status, del.body.message]).toEqual([
      429,
      'Too many requests. Please try again later.',
    ]);
    expect(await countRows(db.url, 'SELECT count(*)::int AS n FROM favourites')).toBe(0);

    // The list has a counter of its own (read tier).
    expect((await getAs(t.http, '/libraries/favourites', user.access)).status).toBe(200);

    // A sliding window of 300 s: once the clock moves past it, the counter is free again.
    t.clock.advance(301_000);
    const fresh = await registerUser(t.http);
    const after = await favourite(t, library.slug, fresh.access);
    expect([after.status, after.body]).toEqual([201, ADDED]);
  });
});
