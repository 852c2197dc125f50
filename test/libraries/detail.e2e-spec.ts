/**
 * GET /libraries/{slug}: visibility by status and caller, community photos, is_favourited, Cache-Control, and the
 * literal /libraries/… routes winning over the slug route even when a row carries that word as its slug.
 */
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { withClient } from '../support/database.js';
import {
  createLibrary,
  insertLibraries,
  insertLibrary,
  ISO_MS,
  NOT_FOUND,
  sortedKeys,
  UNAUTHORIZED,
  withFields,
  BLANK_OPTIONAL_FIELDS,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

describe('GET /libraries/{slug}', () => {
  let approvedId: number;

  const detail = (slug: string, token?: string) => {
    const req = request(t.http).get(`/api/v1/libraries/${slug}`);
    return token ? req.set('Authorization', bearer(token)) : req;
  };

  const { db, t, owner, other } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { owner: 'user', other: 'user' },
  });

  beforeAll(async () => {
    const [approved] = await insertLibraries(db.url, [
      {
        slug: 'approved-one',
        name: 'Offener Bücherschrank',
        description: 'Im Park.',
        address: 'Parkweg 2',
        city: 'Leipzig',
        postal_code: '04109',
        lat: 51.3397,
        lng: 12.3731,
        wheelchair_accessible: 'yes',
        capacity: 80,
        is_indoor: false,
        is_lit: true,
        website: 'https://example.org/schrank',
        operator: 'Stadt Leipzig',
        source: 'legacy-import',
        photo_key: 'libraries/ab/main.jpg',
        thumbnail_key: 'libraries/ab/main_thumb.jpg',
        created_by: owner.id,
        created_at: new Date('2026-03-04T05:06:07.089Z'),
      },
      { slug: 'pending-one', status: 'pending', created_by: owner.id },
      {
        slug: 'rejected-one',
        status: 'rejected',
        rejection_reason: 'Duplicate.',
        created_by: owner.id,
      },
      { slug: 'pending-orphan', status: 'pending', created_by: null },
    ]);
    approvedId = approved.id;
    await withClient(db.url, async (client) => {
      const photo = `INSERT INTO library_photos (library_id, created_by, caption, photo_key, thumbnail_key, status, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)`;
      await client.query(photo, [
        approvedId,
        other.id,
        'Older',
        'libraries/c1/a.jpg',
        'libraries/c1/a_thumb.jpg',
        'approved',
        '2026-04-01T00:00:00Z',
      ]);
      await client.query(photo, [
        approvedId,
        other.id,
        'Newer',
        'libraries/c2/b.jpg',
        'libraries/c2/b_thumb.jpg',
        'approved',
        '2026-05-01T00:00:00Z',
      ]);
      await client.query(photo, [
        approvedId,
        other.id,
        'Waiting',
        'libraries/c3/c.jpg',
        'libraries/c3/c_thumb.jpg',
        'pending',
        '2026-06-01T00:00:00Z',
      ]);
      await client.query(photo, [
        approvedId,
        other.id,
        'Refused',
        'libraries/c4/d.jpg',
        'libraries/c4/d_thumb.jpg',
        'rejected',
        '2026-06-02T00:00:00Z',
      ]);
      await client.query('INSERT INTO favourites (user_id, library_id) VALUES ($1, $2)', [
        other.id,
        approvedId,
      ]);
    });
  });

  it('shows an approved library to anyone: item fields + approved community photos, newest first', async () => {
    const res = await detail('approved-one').expect(200);
    expect(sortedKeys(res.body)).toEqual(withFields('photos'));
    expect(res.body).toEqual({
      id: approvedId,
      slug: 'approved-one',
      name: 'Offener Bücherschrank',
      description: 'Im Park.',
      photo_url: '/media/libraries/ab/main.jpg',
      thumbnail_url: '/media/libraries/ab/main_thumb.jpg',
      lat: 51.3397,
      lng: 12.3731,
      address: 'Parkweg 2',
      city: 'Leipzig',
      country: 'DE',
      postal_code: '04109',
      wheelchair_accessible: 'yes',
      capacity: 80,
      is_indoor: false,
      is_lit: true,
      website: 'https://example.org/schrank',
      contact: '',
      source: 'legacy-import',
      operator: 'Stadt Leipzig',
      brand: '',
      created_at: '2026-03-04T05:06:07.089Z',
      is_favourited: false,
      photos: [
        {
          id: expect.any(Number),
          caption: 'Newer',
          photo_url: '/media/libraries/c2/b.jpg',
          thumbnail_url: '/media/libraries/c2/b_thumb.jpg',
          created_at: '2026-05-01T00:00:00.000Z',
        },
        {
          id: expect.any(Number),
          caption: 'Older',
          photo_url: '/media/libraries/c1/a.jpg',
          thumbnail_url: '/media/libraries/c1/a_thumb.jpg',
          created_at: '2026-04-01T00:00:00.000Z',
        },
      ],
    });
    expect(res.headers['cache-control']).toMatch(/^public, max-age=0, s-maxage=\d+$/);
    expect((await detail('approved-one/').expect(200)).body).toEqual(res.body);
  });

  it('answers empty text as "" and unknown values as null, never null text', async () => {
    const bare = await insertLibrary(db.url, { slug: 'bare-one' });
    const res = await detail(bare.slug).expect(200);
    expect(res.body).toMatchObject({
      name: '',
      description: '',
      photo_url: '',
      thumbnail_url: '',
      ...BLANK_OPTIONAL_FIELDS,
      photos: [],
    });
    expect(res.body.created_at).toMatch(ISO_MS);
  });

  it('gives created_at to the millisecond, truncated, whatever precision PostgreSQL keeps', async () => {
    const times: [string, string][] = [
      ['2026-03-04 05:06:07.089999+00', '2026-03-04T05:06:07.089Z'],
      ['2026-03-04 05:06:07.5+00', '2026-03-04T05:06:07.500Z'],
      ['2026-03-04 05:06:07+00', '2026-03-04T05:06:07.000Z'],
      ['2026-03-04 05:06:07.123456+05:30', '2026-03-03T23:36:07.123Z'],
      ['0999-12-31 23:59:59.999+00', '0999-12-31T23:59:59.999Z'],
    ];
    for (const [index, [stored, expected]] of times.entries()) {
      const library = await insertLibrary(db.url, { slug: `precise-${index}` });
      await withClient(db.url, (client) =>
        client.query('UPDATE libraries SET created_at = $1 WHERE id = $2', [stored, library.id]),
      );
      expect((await detail(library.slug).expect(200)).body.created_at).toBe(expected);
    }
  });

  it('sets is_favourited for the caller who favourited it, privately', async () => {
    const mine = await detail('approved-one', other.access).expect(200);
    expect(mine.body.is_favourited).toBe(true);
    expect(mine.headers['cache-control']).toBe('private, no-store');
    expect((await detail('approved-one', owner.access).expect(200)).body.is_favourited).toBe(false);
  });

  it('treats a bad token on a public read as anonymous (200, not 401)', async () => {
    const res = await detail('approved-one', 'garbage.token.value').expect(200);
    expect(res.body.is_favourited).toBe(false);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const mine = await request(t.http)
      .get('/api/v1/libraries/mine')
      .set('Authorization', bearer('garbage'))
      .expect(401);
    expect(mine.body).toEqual(UNAUTHORIZED);
  });

  it('treats an expired token as anonymous too', async () => {
    const start = t.clock.now();
    try {
      t.clock.advance(10 * 60 * 1000);
      const res = await detail('approved-one', other.access).expect(200);
      expect(res.body.is_favourited).toBe(false);
      await detail('pending-one', owner.access).expect(404);
    } finally {
      t.clock.set(start);
    }
    expect((await detail('approved-one', other.access).expect(200)).body.is_favourited).toBe(true);
  });

  it('shows a pending library only to its creator', async () => {
    const res = await detail('pending-one', owner.access).expect(200);
    expect(res.body.slug).toBe('pending-one');
    expect(res.body).not.toHaveProperty('status');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect((await detail('pending-one', other.access).expect(404)).body).toEqual(NOT_FOUND);
    expect((await detail('pending-one').expect(404)).body).toEqual(NOT_FOUND);
    expect((await detail('pending-one', 'garbage').expect(404)).body).toEqual(NOT_FOUND);
    expect((await detail('pending-orphan', owner.access).expect(404)).body).toEqual(NOT_FOUND);
  });

  it('shows a rejected library only to its creator, with its status and the reason, privately', async () => {
    const res = await detail('rejected-one', owner.access).expect(200);
    expect(res.body).toMatchObject({
      slug: 'rejected-one',
      status: 'rejected',
      rejection_reason: 'Duplicate.',
    });
    expect(res.headers['cache-control']).toBe('private, no-store');
    for (const token of [other.access, undefined, 'garbage']) {
      expect((await detail('rejected-one', token).expect(404)).body).toEqual(NOT_FOUND);
    }
  });

  it('answers 404 for an unknown slug', async () => {
    expect((await detail('no-such-library').expect(404)).body).toEqual(NOT_FOUND);
  });

  it('shows the creator their own fresh submission right after POST', async () => {
    const created = await createLibrary(t.http, owner.access, { city: 'Halle', name: 'Neu' });
    const mine = await detail(created.slug, owner.access).expect(200);
    const { mapdb_submission_allowed: _permission, ...item } = created;
    expect(mine.body).toEqual({ ...item, photos: [] });
    await detail(created.slug, other.access).expect(404);
  });

  describe('literal routes win over /{slug}, even when a row has that word as its slug', () => {
    beforeAll(async () => {
      // Slug generation never produces these words; rows imported from elsewhere might still carry them.
      await insertLibraries(
        db.url,
        ['latest', 'countries', 'mine', 'favourites', 'moderation'].map((slug) => ({
          slug,
          name: `Row ${slug}`,
        })),
      );
    });

    it.each([
      ['latest', ['items']],
      ['countries', ['items']],
    ])('/libraries/%s answers its own list anonymously', async (word, keys) => {
      for (const path of [`/api/v1/libraries/${word}`, `/api/v1/libraries/${word}/`]) {
        const res = await request(t.http).get(path).expect(200);
        expect(sortedKeys(res.body)).toEqual(keys);
      }
    });

    it.each(['mine', 'favourites', 'moderation', 'mine/reports', 'mine/photos'])(
      'GET /libraries/%s is 401 anonymously (not 404, not the row)',
      async (path) => {
        const res = await request(t.http).get(`/api/v1/libraries/${path}`).expect(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      },
    );

    it.each(['mine', 'favourites'])(
      'GET /libraries/%s with a token is the paginated list',
      async (word) => {
        const res = await request(t.http)
          .get(`/api/v1/libraries/${word}`)
          .set('Authorization', bearer(other.access))
          .expect(200);
        expect(sortedKeys(res.body)).toEqual(['items', 'pagination']);
      },
    );

    it('GET /libraries/moderation is 403 for a non-staff user', async () => {
      const res = await request(t.http)
        .get('/api/v1/libraries/moderation')
        .set('Authorization', bearer(other.access))
        .expect(403);
      expect(res.body).toEqual({ message: 'Staff access required.', details: null });
    });
  });
});
