/**
 * GET /{slug}/preview: the exact node (position and allowlisted tags) and changeset tags, for each verification
 * flag; private and internal values never reach the payload; the confirm sends exactly the preview's tags for the
 * same flags. A library that is not eligible (writes off, no check, …) is refused: 409 with the record's blockers.
 */
import request from 'supertest';
import { bearer } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import {
  CREATED_BY,
  PLAN_URL,
  SOURCE_WORDING,
  adminGet,
  adminPost,
  checkPasses,
  codes,
  sql,
  submitLibrary,
  type SubmittedLibrary,
  mapSuite,
} from './helpers.js';

const PRIVATE = {
  description: 'PRIVATE-DESCRIPTION: the key hangs behind the bakery counter',
  contact: 'PRIVATE-CONTACT kiosk.keeper@example.net +49 170 5550123',
  address: 'Lindenweg 12',
  postal_code: '79111',
};

const FULL_FIELDS = {
  name: 'Lesekiste Lindenweg',
  ...PRIVATE,
  city: 'Freiburg',
  country: 'DE',
  website: 'https://bookcase.example.org/lindenweg',
  operator: 'Bürgerverein Altstadt',
  brand: 'Bücherwelt',
  capacity: 120,
  is_indoor: true,
  is_lit: false,
  wheelchair_accessible: 'limited',
};

const CHANGESET_TAGS = {
  comment: 'Add 1 reviewed public bookcase in Freiburg, DE',
  created_by: CREATED_BY,
  source: SOURCE_WORDING,
  description: `Import plan and contact: ${PLAN_URL}`,
  mechanical: 'yes',
  review_requested: 'yes',
};

const BASE_TAGS = {
  amenity: 'public_bookcase',
  capacity: '120',
  location: 'indoor',
  wheelchair: 'limited',
  lit: 'no',
};

const ALL_VERIFIED = {
  verified_name: true,
  verified_brand: true,
  verified_operator: true,
  verified_website: true,
};

describe('map contribution preview', () => {
  const { fake, db, t, staff, owner, startApp } = mapSuite({ resetFake: true });

  const preview = async (lib: SubmittedLibrary, flags: Record<string, boolean> = {}) => {
    const query = new URLSearchParams(
      Object.entries(flags).map(([key, value]): [string, string] => [key, String(value)]),
    );
    // Only an eligible library can be previewed: its duplicate check must be fresh.
    await checkPasses(t.http, staff, lib.slug);
    const res = await adminGet(t.http, staff.access, `/${lib.slug}/preview?${query.toString()}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    return res.body;
  };

  /** Strings of a library that must never leave the service towards the map. */
  const privateStrings = (lib: SubmittedLibrary, extra: string[] = []) => [
    PRIVATE.description,
    'PRIVATE-DESCRIPTION',
    'PRIVATE-CONTACT',
    'kiosk.keeper',
    'Lindenweg 12',
    PRIVATE.postal_code,
    owner.email,
    owner.username,
    lib.slug,
    String(lib.body.photo_url),
    String(lib.body.thumbnail_url),
    '/media/',
    ...extra,
  ];

  it('without verification: amenity plus the factual values only, and the exact changeset tags', async () => {
    const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
    await checkPasses(t.http, staff, lib.slug);
    const body = await preview(lib);
    expect(body).toEqual({
      eligible: true,
      blockers: [],
      warnings: expect.any(Array),
      node: { lat: lib.lat, lon: lib.lng, tags: BASE_TAGS },
      changeset_tags: CHANGESET_TAGS,
    });
    for (const label of ['Name', 'Brand', 'Operator', 'Website']) {
      expect(body.warnings).toContain(`${label} left out: not verified by staff.`);
    }
  });

  it('each verification flag adds exactly its own tag', async () => {
    const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
    const cases: [string, Record<string, string>][] = [
      ['verified_name', { name: 'Lesekiste Lindenweg' }],
      ['verified_brand', { brand: 'Bücherwelt' }],
      ['verified_operator', { operator: 'Bürgerverein Altstadt' }],
      ['verified_website', { website: 'https://bookcase.example.org/lindenweg' }],
    ];
    for (const [flag, added] of cases) {
      const body = await preview(lib, { [flag]: true });
      expect([flag, body.node.tags]).toEqual([flag, { ...BASE_TAGS, ...added }]);
      const off = await preview(lib, { [flag]: false });
      expect([flag, off.node.tags]).toEqual([flag, BASE_TAGS]);
    }
    const all = await preview(lib, ALL_VERIFIED);
    expect(all.node.tags).toEqual({
      ...BASE_TAGS,
      name: 'Lesekiste Lindenweg',
      brand: 'Bücherwelt',
      operator: 'Bürgerverein Altstadt',
      website: 'https://bookcase.example.org/lindenweg',
    });
    expect(Object.keys(all.node.tags)).toEqual([
      'amenity',
      'name',
      'capacity',
      'location',
      'wheelchair',
      'lit',
      'brand',
      'operator',
      'website',
    ]);
  });

  it('never sends an AI-generated name, even when marked verified', async () => {
    const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
    await sql(
      db.url,
      "UPDATE libraries SET ai_generated_fields = '{name,description}' WHERE id = $1",
      [lib.id],
    );
    const body = await preview(lib, ALL_VERIFIED);
    expect(body.node.tags.name).toBeUndefined();
    expect(body.warnings).toContain('Name left out: it was generated by AI, not found on site.');
  });

  it.each(['Public Bookcase', 'Offener Bücherschrank', 'little free library', 'BOOK-SWAP'])(
    'never sends a generic display name (%s), even when marked verified',
    async (name) => {
      const lib = await submitLibrary(t.http, owner, staff, { ...FULL_FIELDS, name });
      const body = await preview(lib, { verified_name: true });
      expect(body.node.tags).toEqual(BASE_TAGS);
    },
  );

  it('omits capacity 0, is_indoor false, unknown wheelchair and lighting, a blank or media website', async () => {
    const lib = await submitLibrary(t.http, owner, staff, {
      ...FULL_FIELDS,
      capacity: 0,
      is_indoor: false,
      is_lit: undefined,
      wheelchair_accessible: undefined,
      website: 'https://bookcase.example.org/photo.jpg',
      brand: undefined,
    });
    const body = await preview(lib, ALL_VERIFIED);
    expect(body.node.tags).toEqual({
      amenity: 'public_bookcase',
      name: 'Lesekiste Lindenweg',
      operator: 'Bürgerverein Altstadt',
    });
    expect(body.warnings).toContain('Website left out: not a public http(s) page address.');
    expect(body.warnings).toContain('Brand marked verified but the library has none.');

    const lit = await submitLibrary(t.http, owner, staff, { ...FULL_FIELDS, is_lit: true });
    expect((await preview(lit)).node.tags.lit).toBe('yes');
  });

  it('keeps description, address, contact, photos, ids, slug, source, external_id and account data out', async () => {
    const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
    await sql(
      db.url,
      "UPDATE libraries SET source = 'city-survey-2024', external_id = 'BC-000123' WHERE id = $1",
      [lib.id],
    );
    await checkPasses(t.http, staff, lib.slug);
    const body = await preview(lib, ALL_VERIFIED);
    expect(body.eligible).toBe(true);
    const payload = JSON.stringify({ node: body.node, changeset_tags: body.changeset_tags });
    for (const secret of privateStrings(lib, ['city-survey-2024', 'BC-000123'])) {
      expect([secret, payload.includes(secret)]).toEqual([secret, false]);
    }
    expect(Object.keys(body.node)).toEqual(['lat', 'lon', 'tags']);
    const values = Object.values(body.node.tags as Record<string, string>);
    expect(values).not.toContain(String(lib.id));

    // …and the write sends exactly that, nothing more.
    const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, ALL_VERIFIED);
    expect(confirm.body.status).toBe('contributed');
    const bodies = fake.writeRequests.map((req) => req.body).join('\n');
    for (const secret of privateStrings(lib, ['city-survey-2024', 'BC-000123'])) {
      expect([secret, bodies.includes(secret)]).toEqual([secret, false]);
    }
  });

  it.each([
    ['no flags', {}],
    ['name only', { verified_name: true }],
    ['operator and website', { verified_operator: true, verified_website: true }],
    ['all flags', ALL_VERIFIED],
  ])(
    'the confirm sends the preview’s exact node and changeset tags (%s)',
    async (_label, flags) => {
      const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
      await checkPasses(t.http, staff, lib.slug);
      const shown = await preview(lib, flags);
      const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, flags);
      expect([confirm.status, confirm.body.status]).toEqual([200, 'contributed']);

      const node = fake.nodes.get(confirm.body.mapdb_element_id)!;
      expect(node.tags).toEqual(shown.node.tags);
      expect([node.lat, node.lon]).toEqual([
        Number(shown.node.lat.toFixed(7)),
        Number(shown.node.lon.toFixed(7)),
      ]);
      expect(fake.changesets.get(confirm.body.changeset_id)!.tags).toEqual(shown.changeset_tags);
    },
  );

  it('rejects a non-boolean flag with 422', async () => {
    const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
    const res = await adminGet(t.http, staff.access, `/${lib.slug}/preview?verified_name=perhaps`);
    expect(res.status).toBe(422);
    const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {
      verified_name: 'perhaps',
    });
    expect(confirm.status).toBe(422);
    expect(fake.writeRequests).toEqual([]);
  });

  describe('with writes off and nothing configured (the production default)', () => {
    let plain: TestApp;

    beforeAll(async () => {
      plain = await startApp({ env: { RATE_LIMIT_ENABLED: 'false' } });
    });

    it('refuses the preview (409 with the record blockers, no tags) and reaches no map service', async () => {
      const lib = await submitLibrary(t.http, owner, staff, FULL_FIELDS);
      const res = await request(plain.http)
        .get(`/api/v1/admin/map-contributions/${lib.slug}/preview?verified_name=true`)
        .set('Authorization', bearer(staff.access));
      expect(res.status).toBe(409);
      expect(codes(res.body.details)).toEqual(['check_missing', 'writes_disabled']);
      const record = await request(plain.http)
        .get(`/api/v1/admin/map-contributions/${lib.slug}`)
        .set('Authorization', bearer(staff.access));
      expect(codes(res.body.details)).toEqual(codes(record.body));
      expect(res.body).toEqual({
        message: 'This library cannot be previewed: not every condition holds.',
        details: { blockers: record.body.blockers },
      });
      expect(JSON.stringify(res.body)).not.toContain('public_bookcase');
      expect(fake.requests).toEqual([]);
    });
  });
});
