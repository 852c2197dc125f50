/**
 * PATCH /libraries/{slug} (multipart): owner only, protected fields refused with nothing changed, latitude and
 * longitude together, pending libraries edited in place (old photo files removed), approved libraries staged in
 * pending_changes / pending_photo with the public view unchanged, rejected ones hidden.
 */
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { withClient } from '../support/database.js';
import {
  createLibrary,
  jpeg,
  jpegOfSize,
  libraryRow,
  mediaFiles,
  multipart,
  NOT_FOUND,
  sortedKeys,
  UNAUTHORIZED,
  withFields,
  type PhotoPart,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

type Fields = Record<string, string | number | boolean | undefined>;

describe('PATCH /libraries/{slug}', () => {
  const patch = (
    slug: string,
    fields: Fields,
    token: string | undefined,
    photo: PhotoPart | null = null,
  ) => multipart(request(t.http).patch(`/api/v1/libraries/${slug}`), fields, photo, token);
  const publicView = (slug: string) => request(t.http).get(`/api/v1/libraries/${slug}`);
  const keyOf = (url: string) => url.replace(/^\/media\//, '');

  async function approvedLibrary(overrides: Fields = {}) {
    const created = await createLibrary(t.http, owner.access, {
      name: 'Published name',
      ...overrides,
    });
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET status = 'approved' WHERE id = $1`, [created.id]),
    );
    return created;
  }

  const { db, t, owner, other } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { owner: 'user', other: 'user' },
  });

  describe('who may edit', () => {
    it('answers 401 anonymously and 404 to anyone but the owner, changing nothing', async () => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      const anonymous = await patch(created.slug, { name: 'Hijacked' }, undefined);
      expect([anonymous.status, anonymous.body]).toEqual([401, UNAUTHORIZED]);
      const res = await patch(created.slug, { name: 'Hijacked' }, other.access);
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
      const approved = await approvedLibrary();
      const staged = await patch(approved.slug, { name: 'Hijacked' }, other.access);
      expect([staged.status, staged.body]).toEqual([404, NOT_FOUND]);
      expect(await libraryRow(db.url, created.id)).toEqual(before);
      expect((await libraryRow(db.url, approved.id))?.pending_changes).toBeNull();
    });

    it('answers 404 for an unknown slug', async () => {
      const res = await patch('no-such-library', { name: 'x' }, owner.access);
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    });

    it('answers 404 to the owner of a rejected library', async () => {
      const created = await createLibrary(t.http, owner.access);
      await withClient(db.url, (client) =>
        client.query(
          `UPDATE libraries SET status = 'rejected', rejection_reason = 'No.' WHERE id = $1`,
          [created.id],
        ),
      );
      const before = await libraryRow(db.url, created.id);
      const res = await patch(created.slug, { name: 'Second try' }, owner.access);
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
      expect(await libraryRow(db.url, created.id)).toEqual(before);
    });
  });

  describe('refused requests change nothing', () => {
    it.each([
      ['mapdb_submission_allowed', 'true'],
      ['status', 'approved'],
      ['slug', 'a-better-slug'],
      ['source', 'mapdb'],
      ['external_id', 'node/123'],
      ['created_by', '1'],
      ['submission_origin', 'staff'],
    ])('%s → 400 "Unsupported field: <name>." with nothing changed', async (field, value) => {
      for (const approve of [false, true]) {
        const created = approve
          ? await approvedLibrary()
          : await createLibrary(t.http, owner.access);
        const before = await libraryRow(db.url, created.id);
        const files = await mediaFiles(t);
        const res = await patch(
          created.slug,
          { name: 'Also changed', [field]: value },
          owner.access,
          {
            data: await jpeg(40, 30),
          },
        );
        expect([res.status, res.body]).toEqual([
          400,
          { message: `Unsupported field: ${field}.`, details: null },
        ]);
        expect(await libraryRow(db.url, created.id)).toEqual(before);
        expect(await mediaFiles(t)).toEqual(files);
      }
    });

    it('latitude without longitude (or the reverse) → 400', async () => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      for (const fields of [
        { latitude: '50.1' },
        { longitude: '8.6' },
        { name: 'x', latitude: '50.1' },
      ]) {
        const res = await patch(created.slug, fields, owner.access);
        expect([res.status, res.body]).toEqual([
          400,
          { message: 'Latitude and longitude must be provided together.', details: null },
        ]);
      }
      expect(await libraryRow(db.url, created.id)).toEqual(before);
    });

    it('no field at all → 400 (unknown fields do not count)', async () => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      const empty = await request(t.http)
        .patch(`/api/v1/libraries/${created.slug}`)
        .set('Authorization', bearer(owner.access));
      const unknown = await patch(created.slug, { colour: 'red' }, owner.access);
      for (const res of [empty, unknown]) {
        expect([res.status, res.body]).toEqual([
          400,
          { message: 'Provide at least one field to update.', details: null },
        ]);
      }
      expect(await libraryRow(db.url, created.id)).toEqual(before);
    });

    it.each([
      ['name', 'n'.repeat(256)],
      ['city', ''],
      ['country', 'XX'],
      ['website', 'ftp://example.org'],
      ['capacity', '-1'],
      ['wheelchair_accessible', 'sometimes'],
    ])('an invalid %s → 422 with loc ["form", field]', async (field, value) => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      const res = await patch(created.slug, { [field]: value }, owner.access);
      expect(res.status).toBe(422);
      expect(res.body.details.errors.map((error: { loc: string[] }) => error.loc)).toEqual([
        ['form', field],
      ]);
      expect(await libraryRow(db.url, created.id)).toEqual(before);
    });
  });

  describe('a pending library', () => {
    it('is edited in place; the answer is the owner view (item + status + pending_changes)', async () => {
      const created = await createLibrary(t.http, owner.access);
      const res = await patch(
        created.slug,
        {
          name: 'Neuer Name',
          city: 'Karlsruhe',
          country: 'de',
          latitude: '49.0069',
          longitude: '8.4037',
          capacity: '25',
          is_lit: 'false',
          website: 'karlsruhe.example.org',
          description: '',
        },
        owner.access,
      );
      expect(res.status).toBe(200);
      expect(sortedKeys(res.body)).toEqual(withFields('pending_changes', 'status'));
      const { mapdb_submission_allowed: _permission, ...item } = created;
      expect(res.body).toEqual({
        ...item,
        name: 'Neuer Name',
        description: '',
        city: 'Karlsruhe',
        country: 'DE',
        lat: 49.0069,
        lng: 8.4037,
        capacity: 25,
        is_lit: false,
        website: 'https://karlsruhe.example.org',
        status: 'pending',
        pending_changes: null,
      });
      expect(res.body.slug).toBe(created.slug);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const row = await libraryRow(db.url, created.id);
      expect(row).toMatchObject({
        name: 'Neuer Name',
        city: 'Karlsruhe',
        status: 'pending',
        pending_changes: null,
        pending_photo: null,
      });
      const mine = await request(t.http)
        .get(`/api/v1/libraries/${created.slug}`)
        .set('Authorization', bearer(owner.access))
        .expect(200);
      expect(mine.body.name).toBe('Neuer Name');
    });

    it('takes a new photo in place of the old one and deletes the old files', async () => {
      const created = await createLibrary(t.http, owner.access);
      const oldKeys = [keyOf(created.photo_url as string), keyOf(created.thumbnail_url as string)];
      expect(await mediaFiles(t)).toEqual(expect.arrayContaining(oldKeys));
      const res = await patch(created.slug, {}, owner.access, { data: await jpeg(800, 400) });
      expect(res.status).toBe(200);
      expect(res.body.photo_url).not.toBe(created.photo_url);
      expect(res.body.pending_changes).toBeNull();
      const files = await mediaFiles(t);
      expect(files).toEqual(
        expect.arrayContaining([keyOf(res.body.photo_url), keyOf(res.body.thumbnail_url)]),
      );
      expect(files).not.toContain(oldKeys[0]);
      expect(files).not.toContain(oldKeys[1]);
    });

    it('refuses an invalid photo with 400 and keeps the old one', async () => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      const files = await mediaFiles(t);
      const res = await patch(created.slug, { name: 'x' }, owner.access, {
        data: Buffer.from('not an image'),
      });
      expect([res.status, res.body]).toEqual([
        400,
        { message: 'Upload a valid image in JPEG, PNG, or WEBP format.', details: null },
      ]);
      expect(await libraryRow(db.url, created.id)).toEqual(before);
      expect(await mediaFiles(t)).toEqual(files);
    });

    it('refuses a photo over 8 MB with 413 and keeps the old one', async () => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      const files = await mediaFiles(t);
      const res = await patch(created.slug, { name: 'x' }, owner.access, {
        data: await jpegOfSize(8 * 1024 * 1024 + 1),
      });
      expect([res.status, res.body]).toEqual([
        413,
        { message: 'Photo must be 8MB or smaller.', details: null },
      ]);
      expect(await libraryRow(db.url, created.id)).toEqual(before);
      expect(await mediaFiles(t)).toEqual(files);
    });

    it('keeps the row and the old files when the database refuses the edit, and removes the new files', async () => {
      const created = await createLibrary(t.http, owner.access);
      const before = await libraryRow(db.url, created.id);
      const files = await mediaFiles(t);
      await withClient(db.url, (client) =>
        client.query(`
          CREATE FUNCTION refuse_edit() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'forced failure for the test'; END $$;
          CREATE TRIGGER refuse_edit BEFORE UPDATE ON libraries
            FOR EACH ROW WHEN (NEW.name = 'Refused edit') EXECUTE FUNCTION refuse_edit();`),
      );
      try {
        const res = await patch(created.slug, { name: 'Refused edit' }, owner.access, {
          data: await jpeg(300, 200),
        });
        expect([res.status, res.body]).toEqual([
          500,
          { message: 'Internal server error.', details: null },
        ]);
      } finally {
        await withClient(db.url, (client) =>
          client.query('DROP TRIGGER refuse_edit ON libraries; DROP FUNCTION refuse_edit()'),
        );
      }
      expect(await libraryRow(db.url, created.id)).toEqual(before);
      expect(await mediaFiles(t)).toEqual(files);
    });
  });

  describe('an approved library', () => {
    it('stays published unchanged; the edit is staged and shown to the owner in pending_changes', async () => {
      const created = await approvedLibrary();
      const published = (await publicView(created.slug).expect(200)).body;

      const first = await patch(
        created.slug,
        { name: 'Staged name', capacity: '12' },
        owner.access,
      );
      expect(first.status).toBe(200);
      expect(sortedKeys(first.body)).toEqual(withFields('pending_changes', 'status'));
      const { photos: _photos, ...publishedItem } = published;
      expect(first.body).toEqual({
        ...publishedItem,
        status: 'approved',
        pending_changes: { name: 'Staged name', capacity: 12 },
      });
      expect((await publicView(created.slug).expect(200)).body).toEqual(published);

      const second = await patch(
        created.slug,
        { description: 'Staged description', latitude: '48.1', longitude: '11.5' },
        owner.access,
      );
      expect(second.body.pending_changes).toEqual({
        name: 'Staged name',
        capacity: 12,
        description: 'Staged description',
        latitude: 48.1,
        longitude: 11.5,
      });
      const third = await patch(created.slug, { name: 'Staged again' }, owner.access);
      expect(third.body.pending_changes).toMatchObject({
        name: 'Staged again',
        description: 'Staged description',
      });
      expect((await publicView(created.slug).expect(200)).body).toEqual(published);
      const row = await libraryRow(db.url, created.id);
      expect(row).toMatchObject({ name: 'Published name', status: 'approved' });
      expect(row?.pending_changes).toEqual(third.body.pending_changes);
    });

    it('stages a photo: URLs in pending_changes, the published photo untouched, a newer staged photo replaces the older', async () => {
      const created = await approvedLibrary();
      const published = (await publicView(created.slug).expect(200)).body;
      const publishedKeys = [keyOf(published.photo_url), keyOf(published.thumbnail_url)];

      const first = await patch(created.slug, {}, owner.access, { data: await jpeg(500, 500) });
      expect(first.status).toBe(200);
      expect(first.body.photo_url).toBe(published.photo_url);
      expect(first.body.pending_changes).toEqual({
        photo_url: expect.stringMatching(/^\/media\/libraries\/.+\.jpg$/),
        thumbnail_url: expect.stringMatching(/^\/media\/libraries\/.+_thumb\.jpg$/),
      });
      const firstStaged = [
        keyOf(first.body.pending_changes.photo_url),
        keyOf(first.body.pending_changes.thumbnail_url),
      ];
      expect(await mediaFiles(t)).toEqual(
        expect.arrayContaining([...publishedKeys, ...firstStaged]),
      );

      const second = await patch(created.slug, { name: 'With a photo' }, owner.access, {
        data: await jpeg(600, 300),
      });
      expect(second.body.pending_changes).toEqual({
        name: 'With a photo',
        photo_url: expect.any(String),
        thumbnail_url: expect.any(String),
      });
      expect(second.body.pending_changes.photo_url).not.toBe(first.body.pending_changes.photo_url);
      const files = await mediaFiles(t);
      expect(files).toEqual(expect.arrayContaining(publishedKeys));
      expect(files).not.toContain(firstStaged[0]);
      expect(files).not.toContain(firstStaged[1]);
      expect((await publicView(created.slug).expect(200)).body).toEqual(published);
      const row = await libraryRow(db.url, created.id);
      expect(row?.pending_photo).toEqual({
        photo_key: keyOf(second.body.pending_changes.photo_url),
        thumbnail_key: keyOf(second.body.pending_changes.thumbnail_url),
      });
    });

    it('lists the staged values in /libraries/mine', async () => {
      const created = await approvedLibrary();
      await patch(created.slug, { brand: 'Staged brand' }, owner.access).expect(200);
      const mine = await request(t.http)
        .get('/api/v1/libraries/mine?page_size=50')
        .set('Authorization', bearer(owner.access))
        .expect(200);
      const item = (mine.body.items as { id: number }[]).find((entry) => entry.id === created.id);
      expect(item).toMatchObject({
        status: 'approved',
        brand: '',
        pending_changes: { brand: 'Staged brand' },
      });
    });
  });
});
