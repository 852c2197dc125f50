/**
 * POST /libraries/: one test per validation rule of decisions.md §4, the 201 shape, and slug generation (ASCII
 * folding, -2/-3 suffixes, concurrency, reserved words).
 */
import request from 'supertest';
import { itWithDatabaseServer } from '../support/app.js';
import {
  countLibraries,
  createLibrary,
  ISO_MS,
  libraryRow,
  mediaFiles,
  submissionFields,
  submitLibrary,
  UNAUTHORIZED,
  withFields,
  sortedKeys,
  BLANK_OPTIONAL_FIELDS,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

type Fields = Record<string, string | number | boolean | undefined>;

describe('POST /libraries/', () => {
  const { db, t, alice } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user' },
  });

  /** 422 whose every error points at `loc`, with nothing stored. */
  async function expectRefused(fields: Fields, loc: (string | number)[]): Promise<void> {
    const before = await countLibraries(db.url);
    const res = await submitLibrary(t.http, alice.access, fields);
    expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
    const errors = res.body.details.errors as { loc: unknown[]; msg: unknown; type: unknown }[];
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error).toEqual({ loc, msg: expect.any(String), type: expect.any(String) });
    }
    expect(await countLibraries(db.url)).toBe(before);
  }

  async function expectAccepted(fields: Fields): Promise<Record<string, unknown>> {
    const res = await submitLibrary(t.http, alice.access, fields);
    expect([res.status, res.body.message]).toEqual([201, undefined]);
    return res.body;
  }

  describe('201', () => {
    it('answers exactly the 23 item fields plus mapdb_submission_allowed, pending, origin user', async () => {
      const res = await submitLibrary(
        t.http,
        alice.access,
        submissionFields({
          wheelchair_accessible: 'limited',
          capacity: 40,
          is_indoor: 'false',
          is_lit: 'true',
          website: 'https://books.example.org/markt',
          contact: 'books@example.org',
          operator: 'Bürgerverein',
          brand: 'Offener Bücherschrank',
        }),
      );
      expect(res.status).toBe(201);
      expect(sortedKeys(res.body)).toEqual(withFields('mapdb_submission_allowed'));
      expect(res.body).toEqual({
        id: expect.any(Number),
        slug: 'freiburg-marktplatz-1-bucherschrank-am-markt',
        name: 'Bücherschrank am Markt',
        description: 'A red telephone box full of books.',
        photo_url: expect.stringMatching(/^\/media\/libraries\/[0-9a-f]{2}\/[0-9a-f-]{36}\.jpg$/),
        thumbnail_url: expect.stringMatching(
          /^\/media\/libraries\/[0-9a-f]{2}\/[0-9a-f-]{36}_thumb\.jpg$/,
        ),
        lat: 47.9959,
        lng: 7.8522,
        address: 'Marktplatz 1',
        city: 'Freiburg',
        country: 'DE',
        postal_code: '79098',
        wheelchair_accessible: 'limited',
        capacity: 40,
        is_indoor: false,
        is_lit: true,
        website: 'https://books.example.org/markt',
        contact: 'books@example.org',
        source: '',
        operator: 'Bürgerverein',
        brand: 'Offener Bücherschrank',
        created_at: expect.stringMatching(ISO_MS),
        is_favourited: false,
        mapdb_submission_allowed: false,
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
      const row = await libraryRow(db.url, res.body.id);
      expect(row).toMatchObject({
        status: 'pending',
        submission_origin: 'user',
        created_by: alice.id,
        source: '',
        external_id: '',
      });
    });

    it('stores only the given fields: empty text is "" and unknown capacity/indoor/lit are null', async () => {
      const body = await expectAccepted({
        city: 'Kiel',
        country: 'DE',
        latitude: 54.32,
        longitude: 10.13,
      });
      expect(body).toMatchObject({
        name: '',
        description: '',
        ...BLANK_OPTIONAL_FIELDS,
        slug: 'kiel',
      });
      expect(body.created_at).toMatch(ISO_MS);
    });

    it('answers 401 without a token and stores nothing', async () => {
      const before = await countLibraries(db.url);
      const files = await mediaFiles(t);
      const res = await submitLibrary(t.http, undefined);
      expect([res.status, res.body]).toEqual([401, UNAUTHORIZED]);
      const bad = await submitLibrary(t.http, 'not-a-token');
      expect([bad.status, bad.body]).toEqual([401, UNAUTHORIZED]);
      expect(await countLibraries(db.url)).toBe(before);
      expect(await mediaFiles(t)).toEqual(files);
    });
  });

  describe('validation (one rule each; 422 with loc ["form", field])', () => {
    it('name: ≤255 characters', async () => {
      await expectRefused(submissionFields({ name: 'n'.repeat(256) }), ['form', 'name']);
      const body = await expectAccepted(submissionFields({ name: 'n'.repeat(255) }));
      expect(body.name).toBe('n'.repeat(255));
    });

    it('description: ≤2000 characters', async () => {
      await expectRefused(submissionFields({ description: 'd'.repeat(2001) }), [
        'form',
        'description',
      ]);
      const body = await expectAccepted(submissionFields({ description: 'd'.repeat(2000) }));
      expect(body.description).toBe('d'.repeat(2000));
    });

    it('address: ≤255 characters, may be empty', async () => {
      await expectRefused(submissionFields({ address: 'a'.repeat(256) }), ['form', 'address']);
      expect((await expectAccepted(submissionFields({ address: 'a'.repeat(255) }))).address).toBe(
        'a'.repeat(255),
      );
      expect((await expectAccepted(submissionFields({ address: '' }))).address).toBe('');
    });

    it('city: required, 1–100 characters', async () => {
      await expectRefused(submissionFields({ city: undefined }), ['form', 'city']);
      await expectRefused(submissionFields({ city: '' }), ['form', 'city']);
      await expectRefused(submissionFields({ city: '   ' }), ['form', 'city']);
      await expectRefused(submissionFields({ city: 'c'.repeat(101) }), ['form', 'city']);
      expect((await expectAccepted(submissionFields({ city: 'c'.repeat(100) }))).city).toBe(
        'c'.repeat(100),
      );
    });

    it('country: required ISO 3166-1 alpha-2, stored upper-case', async () => {
      await expectRefused(submissionFields({ country: undefined }), ['form', 'country']);
      await expectRefused(submissionFields({ country: 'XX' }), ['form', 'country']);
      await expectRefused(submissionFields({ country: 'DEU' }), ['form', 'country']);
      await expectRefused(submissionFields({ country: 'Germany' }), ['form', 'country']);
      const body = await expectAccepted(submissionFields({ country: 'de' }));
      expect(body.country).toBe('DE');
      expect((await libraryRow(db.url, body.id as number))?.country).toBe('DE');
    });

    it('postal_code: ≤20 characters', async () => {
      await expectRefused(submissionFields({ postal_code: '1'.repeat(21) }), [
        'form',
        'postal_code',
      ]);
      expect(
        (await expectAccepted(submissionFields({ postal_code: '1'.repeat(20) }))).postal_code,
      ).toBe('1'.repeat(20));
    });

    it('wheelchair_accessible: yes, no or limited', async () => {
      await expectRefused(submissionFields({ wheelchair_accessible: 'maybe' }), [
        'form',
        'wheelchair_accessible',
      ]);
      await expectRefused(submissionFields({ wheelchair_accessible: 'YES!' }), [
        'form',
        'wheelchair_accessible',
      ]);
      for (const value of ['yes', 'no', 'limited']) {
        const body = await expectAccepted(submissionFields({ wheelchair_accessible: value }));
        expect(body.wheelchair_accessible).toBe(value);
      }
    });

    it('capacity: an integer ≥ 0', async () => {
      for (const value of ['-1', '2.5', 'many']) {
        await expectRefused(submissionFields({ capacity: value }), ['form', 'capacity']);
      }
      expect((await expectAccepted(submissionFields({ capacity: '0' }))).capacity).toBe(0);
      expect((await expectAccepted(submissionFields({ capacity: '120' }))).capacity).toBe(120);
    });

    it('is_indoor: a boolean', async () => {
      await expectRefused(submissionFields({ is_indoor: 'sometimes' }), ['form', 'is_indoor']);
      expect((await expectAccepted(submissionFields({ is_indoor: 'true' }))).is_indoor).toBe(true);
      expect((await expectAccepted(submissionFields({ is_indoor: 'false' }))).is_indoor).toBe(
        false,
      );
    });

    it('is_lit: a boolean', async () => {
      await expectRefused(submissionFields({ is_lit: 'bright' }), ['form', 'is_lit']);
      expect((await expectAccepted(submissionFields({ is_lit: '1' }))).is_lit).toBe(true);
      expect((await expectAccepted(submissionFields({ is_lit: '0' }))).is_lit).toBe(false);
    });

    it('website: an http(s) URL ≤500; a bare host gets https://, other schemes are refused', async () => {
      await expectRefused(submissionFields({ website: 'ftp://books.example.org/' }), [
        'form',
        'website',
      ]);
      await expectRefused(submissionFields({ website: 'javascript:alert(1)' }), [
        'form',
        'website',
      ]);
      await expectRefused(submissionFields({ website: 'not a url' }), ['form', 'website']);
      const tooLong = `https://example.org/${'p'.repeat(481)}`;
      expect(tooLong).toHaveLength(501);
      await expectRefused(submissionFields({ website: tooLong }), ['form', 'website']);
      const longest = `https://example.org/${'p'.repeat(480)}`;
      expect((await expectAccepted(submissionFields({ website: longest }))).website).toBe(longest);
      expect(
        (await expectAccepted(submissionFields({ website: 'books.example.org' }))).website,
      ).toBe('https://books.example.org');
      expect(
        (await expectAccepted(submissionFields({ website: 'http://books.example.org/x' }))).website,
      ).toBe('http://books.example.org/x');
      expect((await expectAccepted(submissionFields({ website: '' }))).website).toBe('');
    });

    it.each(['contact', 'operator', 'brand'])('%s: ≤255 characters', async (field) => {
      await expectRefused(submissionFields({ [field]: 'x'.repeat(256) }), ['form', field]);
      const body = await expectAccepted(submissionFields({ [field]: 'x'.repeat(255) }));
      expect(body[field]).toBe('x'.repeat(255));
    });

    it('latitude: required, −90..90', async () => {
      for (const value of [undefined, '90.0001', '-90.5', 'north', '']) {
        await expectRefused(submissionFields({ latitude: value }), ['form', 'latitude']);
      }
      expect((await expectAccepted(submissionFields({ latitude: '-90' }))).lat).toBe(-90);
      expect((await expectAccepted(submissionFields({ latitude: '90' }))).lat).toBe(90);
    });

    it('longitude: required, −180..180', async () => {
      for (const value of [undefined, '180.5', '-181', 'east', '']) {
        await expectRefused(submissionFields({ longitude: value }), ['form', 'longitude']);
      }
      expect((await expectAccepted(submissionFields({ longitude: '-180' }))).lng).toBe(-180);
      expect((await expectAccepted(submissionFields({ longitude: '180' }))).lng).toBe(180);
    });

    it('mapdb_submission_allowed: a boolean', async () => {
      await expectRefused(submissionFields({ mapdb_submission_allowed: 'please' }), [
        'form',
        'mapdb_submission_allowed',
      ]);
      const body = await expectAccepted(submissionFields({ mapdb_submission_allowed: 'true' }));
      expect(body.mapdb_submission_allowed).toBe(true);
    });

    it('photo: required (loc ["file", "photo"])', async () => {
      const before = await countLibraries(db.url);
      const res = await submitLibrary(t.http, alice.access, submissionFields(), null);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        message: 'Validation error.',
        details: {
          errors: [{ loc: ['file', 'photo'], msg: expect.any(String), type: expect.any(String) }],
        },
      });
      expect(await countLibraries(db.url)).toBe(before);
    });

    it('counts lengths in characters as the database does (emoji and variation selectors)', async () => {
      const files = await mediaFiles(t);
      // 'a' + VARIATION SELECTOR-16 is two characters to PostgreSQL's varchar(255).
      await expectRefused(submissionFields({ name: 'a\uFE0F'.repeat(128) }), ['form', 'name']);
      await expectRefused(submissionFields({ city: 'a\uFE0F'.repeat(51) }), ['form', 'city']);
      await expectRefused(submissionFields({ name: '📚'.repeat(256) }), ['form', 'name']);
      expect(await mediaFiles(t)).toEqual(files);
      const selectors = `${'a\uFE0F'.repeat(127)}a`;
      expect((await expectAccepted(submissionFields({ name: selectors }))).name).toBe(selectors);
      expect((await expectAccepted(submissionFields({ name: '📚'.repeat(255) }))).name).toBe(
        '📚'.repeat(255),
      );
    });

    it('text containing a NUL character is a validation error, not a server error', async () => {
      const files = await mediaFiles(t);
      await expectRefused(submissionFields({ name: 'Bücher\u0000schrank' }), ['form', 'name']);
      expect(await mediaFiles(t)).toEqual(files);
    });

    it('reports every invalid field at once', async () => {
      const res = await submitLibrary(t.http, alice.access, {
        city: '',
        country: 'ZZ',
        latitude: '100',
        longitude: 'x',
      });
      expect(res.status).toBe(422);
      const locs = new Set(
        (res.body.details.errors as { loc: string[] }[]).map((error) => error.loc.join('.')),
      );
      expect([...locs].sort()).toEqual([
        'form.city',
        'form.country',
        'form.latitude',
        'form.longitude',
      ]);
    });
  });

  describe('slugs', () => {
    it('is slugify("{city} {address} {name}"), ASCII-folded; duplicates get -2, -3', async () => {
      const fields = { city: 'Köln', address: 'Straße des 17. Juni 5', name: 'Éco Bücherbox' };
      const slugs = [];
      for (let index = 0; index < 3; index += 1)
        slugs.push((await createLibrary(t.http, alice.access, fields)).slug);
      expect(slugs).toEqual([
        'koln-strasse-des-17-juni-5-eco-bucherbox',
        'koln-strasse-des-17-juni-5-eco-bucherbox-2',
        'koln-strasse-des-17-juni-5-eco-bucherbox-3',
      ]);
    });

    it('leaves a blank name out', async () => {
      const body = await createLibrary(t.http, alice.access, {
        city: 'Ulm',
        address: 'Münsterplatz 3',
        name: '',
      });
      expect(body.slug).toBe('ulm-munsterplatz-3');
    });

    it('never produces a reserved route word', async () => {
      for (const city of ['Latest', 'Countries', 'Mine', 'Favourites', 'Moderation']) {
        const body = await createLibrary(t.http, alice.access, { city, address: '', name: '' });
        expect(body.slug).not.toBe(city.toLowerCase());
        const detail = await request(t.http)
          .get(`/api/v1/libraries/${body.slug}`)
          .set('Authorization', `Bearer ${alice.access}`);
        expect([detail.status, detail.body.id]).toEqual([200, body.id]);
      }
    });

    itWithDatabaseServer(
      'gives 10 concurrent identical submissions 10 distinct slugs, all 201',
      async () => {
        const fields = submissionFields({
          city: 'Gent',
          address: 'Korenmarkt 1',
          name: 'Boekenkast',
        });
        const responses = await Promise.all(
          Array.from({ length: 10 }, () => submitLibrary(t.http, alice.access, fields)),
        );
        expect(responses.map((res) => res.status)).toEqual(Array(10).fill(201));
        const slugs = responses.map((res) => res.body.slug as string);
        expect(new Set(slugs).size).toBe(10);
        expect([...slugs].sort()).toEqual(
          [
            'gent-korenmarkt-1-boekenkast',
            ...Array.from({ length: 9 }, (_, i) => `gent-korenmarkt-1-boekenkast-${i + 2}`),
          ].sort(),
        );
      },
    );
  });
});
