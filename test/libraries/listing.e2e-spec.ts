/**
 * GET /libraries/, /libraries/latest and /libraries/countries/ on rows written directly with SQL: only approved
 * rows, newest first, pagination math, the city/country/postal_code/has_photo filters, is_favourited, query
 * validation and both trailing-slash forms.
 */
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { withClient } from '../support/database.js';
import {
  insertLibraries,
  ISO_MS,
  ITEM_FIELDS,
  sortedKeys,
  type LibraryFixture,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const at = (iso: string) => new Date(iso);

describe('library listing', () => {
  const ids: Record<string, number> = {};

  const get = (path: string, token?: string) => {
    const req = request(t.http).get(`/api/v1/libraries${path}`);
    return token ? req.set('Authorization', bearer(token)) : req;
  };
  const slugsOf = (res: request.Response) =>
    (res.body.items as { slug: string }[]).map((item) => item.slug);

  const { db, t, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', bob: 'user' },
  });

  beforeAll(async () => {
    const fixtures: LibraryFixture[] = [
      // Ordering and visibility (LU): the newest approved rows of the whole table; newer pending/rejected ones.
      { slug: 'lu-a', country: 'LU', city: 'Luxembourg', created_at: at('2031-01-01T00:00:00Z') },
      { slug: 'lu-b', country: 'LU', city: 'Luxembourg', created_at: at('2031-02-01T00:00:00Z') },
      { slug: 'lu-c', country: 'LU', city: 'Luxembourg', created_at: at('2031-03-01T00:00:00Z') },
      {
        slug: 'lu-p',
        country: 'LU',
        city: 'Luxembourg',
        status: 'pending',
        created_at: at('2032-01-01T00:00:00Z'),
      },
      {
        slug: 'lu-r',
        country: 'LU',
        city: 'Luxembourg',
        status: 'rejected',
        created_at: at('2032-02-01T00:00:00Z'),
      },
      // Pagination (MT): 25 rows, Malta 1 oldest … Malta 25 newest.
      ...Array.from({ length: 25 }, (_, index) => ({
        slug: `malta-${index + 1}`,
        name: `Malta ${index + 1}`,
        country: 'MT',
        city: 'Valletta',
        created_at: new Date(Date.parse('2030-01-01T00:00:00Z') + index * 60_000),
      })),
      // Filters (DE).
      {
        slug: 'de-berlin-1',
        city: 'Berlin',
        postal_code: '10115',
        photo_key: 'libraries/aa/primary.jpg',
        thumbnail_key: 'libraries/aa/primary_thumb.jpg',
        created_at: at('2029-01-01T00:00:00Z'),
      },
      {
        slug: 'de-berlin-2',
        city: 'Berlin-Mitte',
        postal_code: '10117',
        created_at: at('2029-01-02T00:00:00Z'),
      },
      {
        slug: 'de-oberberlin',
        city: 'Oberberlinstadt',
        postal_code: '20115',
        created_at: at('2029-01-03T00:00:00Z'),
      },
      {
        slug: 'de-munich',
        city: 'München',
        postal_code: '80331',
        created_at: at('2029-01-04T00:00:00Z'),
      },
      {
        slug: 'de-pending',
        city: 'Berlin',
        postal_code: '10115',
        status: 'pending',
        created_at: at('2029-01-05T00:00:00Z'),
      },
      // Countries.
      { slug: 'it-roma', country: 'IT', city: 'Roma', created_at: at('2028-01-01T00:00:00Z') },
      { slug: 'it-milano', country: 'IT', city: 'Milano', created_at: at('2028-01-02T00:00:00Z') },
      { slug: 'at-wien', country: 'AT', city: 'Wien', created_at: at('2028-01-03T00:00:00Z') },
      { slug: 'at-graz', country: 'AT', city: 'Graz', created_at: at('2028-01-04T00:00:00Z') },
      { slug: 'fr-paris', country: 'FR', city: 'Paris', created_at: at('2028-01-05T00:00:00Z') },
      {
        slug: 'es-pending',
        country: 'ES',
        city: 'Madrid',
        status: 'pending',
        created_at: at('2028-01-06T00:00:00Z'),
      },
      {
        slug: 'pt-rejected',
        country: 'PT',
        city: 'Lisboa',
        status: 'rejected',
        created_at: at('2028-01-07T00:00:00Z'),
      },
    ];
    for (const row of await insertLibraries(db.url, fixtures)) ids[row.slug] = row.id;

    await withClient(db.url, async (client) => {
      // Community photos: approved (counts as a photo), pending and rejected (do not).
      const photo = `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status) VALUES ($1, 'libraries/cp/p.jpg', 'libraries/cp/p_thumb.jpg', $2)`;
      await client.query(photo, [ids['de-berlin-2'], 'approved']);
      await client.query(photo, [ids['de-oberberlin'], 'pending']);
      await client.query(photo, [ids['de-munich'], 'rejected']);
      await client.query('INSERT INTO favourites (user_id, library_id) VALUES ($1, $2), ($1, $3)', [
        alice.id,
        ids['lu-b'],
        ids['malta-25'],
      ]);
    });
  });

  const APPROVED_TOTAL = 3 + 25 + 4 + 5;

  describe('GET /libraries/', () => {
    it('lists only approved libraries, newest first, as exactly the 23 item fields', async () => {
      const res = await get('/').expect(200);
      expect(sortedKeys(res.body)).toEqual(['items', 'pagination']);
      expect(res.body.pagination).toEqual({
        page: 1,
        page_size: 20,
        total: APPROVED_TOTAL,
        total_pages: 2,
        has_next: true,
        has_previous: false,
      });
      expect(slugsOf(res).slice(0, 5)).toEqual(['lu-c', 'lu-b', 'lu-a', 'malta-25', 'malta-24']);
      for (const item of res.body.items) {
        expect(sortedKeys(item)).toEqual(ITEM_FIELDS);
        expect(item.created_at).toMatch(ISO_MS);
      }
      const all = await get('/?page_size=50').expect(200);
      expect(all.body.items).toHaveLength(APPROVED_TOTAL);
      expect(slugsOf(all)).not.toEqual(expect.arrayContaining(['lu-p']));
      expect(slugsOf(all).filter((slug) => /pending|rejected|-p$|-r$/.test(slug))).toEqual([]);
    });

    it('answers both /libraries and /libraries/ alike, publicly cacheable without a token', async () => {
      const slash = await get('/').expect(200);
      const bare = await get('').expect(200);
      expect(bare.body).toEqual(slash.body);
      expect(slash.headers['cache-control']).toMatch(/^public, max-age=0, s-maxage=\d+$/);
      const maxAge = Number(slash.headers['cache-control'].split('s-maxage=')[1]);
      expect(maxAge).toBeGreaterThan(0);
      expect(maxAge).toBeLessThanOrEqual(300);
    });

    it('is private, no-store with a token', async () => {
      const res = await get('/', alice.access).expect(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
    });

    describe('pagination', () => {
      const page = (query: string) => get(`/?country=MT&${query}`).expect(200);
      const names = (res: request.Response) =>
        (res.body.items as { name: string }[]).map((item) => item.name);

      it('pages of 10: total, total_pages, has_next, has_previous', async () => {
        const first = await page('page_size=10');
        expect(first.body.pagination).toEqual({
          page: 1,
          page_size: 10,
          total: 25,
          total_pages: 3,
          has_next: true,
          has_previous: false,
        });
        expect(names(first)).toEqual(Array.from({ length: 10 }, (_, i) => `Malta ${25 - i}`));
        const second = await page('page=2&page_size=10');
        expect(second.body.pagination).toMatchObject({
          page: 2,
          has_next: true,
          has_previous: true,
        });
        expect(names(second)).toEqual(Array.from({ length: 10 }, (_, i) => `Malta ${15 - i}`));
        const third = await page('page=3&page_size=10');
        expect(third.body.pagination).toMatchObject({
          page: 3,
          total_pages: 3,
          has_next: false,
          has_previous: true,
        });
        expect(names(third)).toEqual(['Malta 5', 'Malta 4', 'Malta 3', 'Malta 2', 'Malta 1']);
      });

      it('answers the last page for a page past the end', async () => {
        const past = await page('page=9&page_size=10');
        const last = await page('page=3&page_size=10');
        expect(past.body).toEqual(last.body);
        expect(past.body.pagination.page).toBe(3);
      });

      it('defaults to 20 per page and allows up to 50', async () => {
        const defaults = await page('');
        expect(defaults.body.items).toHaveLength(20);
        expect(defaults.body.pagination).toMatchObject({ page: 1, page_size: 20, total_pages: 2 });
        const fifty = await page('page_size=50');
        expect(fifty.body.items).toHaveLength(25);
        expect(fifty.body.pagination).toMatchObject({
          page_size: 50,
          total_pages: 1,
          has_next: false,
        });
        const one = await page('page_size=1&page=25');
        expect(names(one)).toEqual(['Malta 1']);
        expect(one.body.pagination).toMatchObject({
          page: 25,
          total_pages: 25,
          has_next: false,
          has_previous: true,
        });
      });

      it('answers an empty result as page 1 of 1 with no items', async () => {
        const res = await get('/?city=Atlantis').expect(200);
        expect(res.body).toEqual({
          items: [],
          pagination: {
            page: 1,
            page_size: 20,
            total: 0,
            total_pages: 1,
            has_next: false,
            has_previous: false,
          },
        });
      });

      it.each([
        ['page_size=0', 'page_size'],
        ['page_size=51', 'page_size'],
        ['page_size=ten', 'page_size'],
        ['page=0', 'page'],
        ['page=-1', 'page'],
        ['page=first', 'page'],
      ])('refuses %s with 422', async (query, field) => {
        const res = await get(`/?${query}`).expect(422);
        expect(res.body.message).toBe('Validation error.');
        expect(res.body.details.errors.map((error: { loc: string[] }) => error.loc)).toEqual(
          expect.arrayContaining([['query', field]]),
        );
      });
    });

    describe('filters', () => {
      it('city: case-insensitive substring', async () => {
        expect(slugsOf(await get('/?city=BERLIN').expect(200))).toEqual([
          'de-oberberlin',
          'de-berlin-2',
          'de-berlin-1',
        ]);
        expect(slugsOf(await get('/?city=mitte').expect(200))).toEqual(['de-berlin-2']);
        expect(slugsOf(await get('/?city=münchen').expect(200))).toEqual(['de-munich']);
        expect((await get('/?city=%25').expect(200)).body.pagination.total).toBe(0);
      });

      it('country: two letters, case-insensitive', async () => {
        const upper = await get('/?country=DE').expect(200);
        expect(slugsOf(upper)).toEqual([
          'de-munich',
          'de-oberberlin',
          'de-berlin-2',
          'de-berlin-1',
        ]);
        expect((await get('/?country=de').expect(200)).body).toEqual(upper.body);
        expect((await get('/?country=dE').expect(200)).body).toEqual(upper.body);
        expect(slugsOf(await get('/?country=es').expect(200))).toEqual([]);
      });

      it('postal_code: substring', async () => {
        expect(slugsOf(await get('/?postal_code=1011').expect(200))).toEqual([
          'de-berlin-2',
          'de-berlin-1',
        ]);
        expect(slugsOf(await get('/?postal_code=0115').expect(200))).toEqual([
          'de-oberberlin',
          'de-berlin-1',
        ]);
        expect(slugsOf(await get('/?postal_code=80331').expect(200))).toEqual(['de-munich']);
      });

      it('has_photo: a primary photo or an approved community photo', async () => {
        expect(slugsOf(await get('/?has_photo=true').expect(200))).toEqual([
          'de-berlin-2',
          'de-berlin-1',
        ]);
        const without = await get('/?has_photo=false&page_size=50').expect(200);
        expect(without.body.pagination.total).toBe(APPROVED_TOTAL - 2);
        expect(slugsOf(without)).toEqual(expect.arrayContaining(['de-oberberlin', 'de-munich']));
        expect(slugsOf(without)).not.toContain('de-berlin-1');
        expect(slugsOf(without)).not.toContain('de-berlin-2');
      });

      it('combines filters', async () => {
        expect(slugsOf(await get('/?city=berlin&postal_code=0115&country=de').expect(200))).toEqual(
          ['de-oberberlin', 'de-berlin-1'],
        );
        expect(slugsOf(await get('/?city=berlin&has_photo=true').expect(200))).toEqual([
          'de-berlin-2',
          'de-berlin-1',
        ]);
      });

      it.each([
        ['country=DEU', 'country'],
        ['country=D', 'country'],
        ['country=1A', 'country'],
        [`city=${'c'.repeat(101)}`, 'city'],
        [`postal_code=${'1'.repeat(21)}`, 'postal_code'],
        ['has_photo=maybe', 'has_photo'],
        [`q=${'q'.repeat(201)}`, 'q'],
        [`search=${'s'.repeat(201)}`, 'search'],
      ])('refuses %s with 422', async (query, field) => {
        const res = await get(`/?${query}`).expect(422);
        expect(res.body.message).toBe('Validation error.');
        for (const error of res.body.details.errors) expect(error.loc).toEqual(['query', field]);
      });
    });

    it('sets is_favourited for the caller only', async () => {
      const favourited = (res: request.Response) =>
        (res.body.items as { slug: string; is_favourited: boolean }[])
          .filter((item) => item.is_favourited)
          .map((item) => item.slug);
      expect(favourited(await get('/?page_size=50', alice.access).expect(200))).toEqual([
        'lu-b',
        'malta-25',
      ]);
      expect(favourited(await get('/?page_size=50', bob.access).expect(200))).toEqual([]);
      expect(favourited(await get('/?page_size=50').expect(200))).toEqual([]);
    });

    it('treats a bad token as anonymous (200, not 401)', async () => {
      const res = await get('/', 'not-a-valid-token').expect(200);
      expect(res.body.pagination.total).toBe(APPROVED_TOTAL);
      expect(
        (res.body.items as { is_favourited: boolean }[]).every((item) => !item.is_favourited),
      ).toBe(true);
    });
  });

  describe('GET /libraries/latest', () => {
    it('answers {items}: the 10 newest approved libraries by default', async () => {
      const res = await get('/latest').expect(200);
      expect(sortedKeys(res.body)).toEqual(['items']);
      expect(slugsOf(res)).toEqual([
        'lu-c',
        'lu-b',
        'lu-a',
        ...Array.from({ length: 7 }, (_, i) => `malta-${25 - i}`),
      ]);
      for (const item of res.body.items) expect(sortedKeys(item)).toEqual(ITEM_FIELDS);
      expect(res.headers['cache-control']).toMatch(/^public, max-age=0, s-maxage=\d+$/);
      expect((await get('/latest/').expect(200)).body).toEqual(res.body);
    });

    it('takes limit 1–50', async () => {
      expect(slugsOf(await get('/latest?limit=1').expect(200))).toEqual(['lu-c']);
      expect(slugsOf(await get('/latest?limit=3').expect(200))).toEqual(['lu-c', 'lu-b', 'lu-a']);
      expect((await get('/latest?limit=50').expect(200)).body.items).toHaveLength(APPROVED_TOTAL);
      for (const limit of ['0', '51', 'ten', '-3']) {
        const res = await get(`/latest?limit=${limit}`).expect(422);
        expect(res.body.details.errors[0].loc).toEqual(['query', 'limit']);
      }
    });

    it('filters by has_photo', async () => {
      expect(slugsOf(await get('/latest?has_photo=true').expect(200))).toEqual([
        'de-berlin-2',
        'de-berlin-1',
      ]);
    });

    it('sets is_favourited for the caller', async () => {
      const mine = await get('/latest?limit=5', alice.access).expect(200);
      expect(
        (mine.body.items as { slug: string; is_favourited: boolean }[]).map((i) => [
          i.slug,
          i.is_favourited,
        ]),
      ).toEqual([
        ['lu-c', false],
        ['lu-b', true],
        ['lu-a', false],
        ['malta-25', true],
        ['malta-24', false],
      ]);
      expect(mine.headers['cache-control']).toBe('private, no-store');
      const anonymous = await get('/latest?limit=5').expect(200);
      expect(
        (anonymous.body.items as { is_favourited: boolean }[]).some((i) => i.is_favourited),
      ).toBe(false);
    });
  });

  describe('GET /libraries/countries/', () => {
    const expected = [
      { country_code: 'MT', country_name: 'Malta', flag_emoji: '🇲🇹', count: 25 },
      { country_code: 'DE', country_name: 'Germany', flag_emoji: '🇩🇪', count: 4 },
      { country_code: 'LU', country_name: 'Luxembourg', flag_emoji: '🇱🇺', count: 3 },
      { country_code: 'AT', country_name: 'Austria', flag_emoji: '🇦🇹', count: 2 },
      { country_code: 'IT', country_name: 'Italy', flag_emoji: '🇮🇹', count: 2 },
      { country_code: 'FR', country_name: 'France', flag_emoji: '🇫🇷', count: 1 },
    ];

    it('counts approved libraries per country: count descending, then code', async () => {
      const res = await get('/countries/').expect(200);
      expect(res.body).toEqual({ items: expected });
      expect(res.headers['cache-control']).toMatch(/^public, max-age=0, s-maxage=\d+$/);
    });

    it('answers /libraries/countries without the slash alike', async () => {
      expect((await get('/countries').expect(200)).body).toEqual({ items: expected });
    });
  });
});
