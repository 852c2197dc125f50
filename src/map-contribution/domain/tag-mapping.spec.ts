import fc from 'fast-check';
import {
  GENERIC_NAMES,
  MAX_TAG_VALUE_LENGTH,
  NODE_TAG_KEYS,
  isGenericName,
  nodeTags,
} from './tag-mapping.js';
import type { LibraryFacts, VerifiedValues } from './types.js';

import { ALL, library } from './tag-mapping-fixtures.js';

const NONE: VerifiedValues = { name: false, brand: false, operator: false, website: false };

const UNKNOWN: Partial<LibraryFacts> = {
  name: '',
  capacity: null,
  isIndoor: null,
  isLit: null,
  wheelchairAccessible: '',
  brand: '',
  operator: '',
  website: '',
};

const codePoints = (value: string) => [...value].length;

describe('nodeTags', () => {
  it('maps every allowlisted value when verified, in allowlist order', () => {
    const tags = nodeTags(library(), ALL);
    expect(tags).toEqual({
      amenity: 'public_bookcase',
      name: 'Leseecke am Lindenplatz',
      capacity: '80',
      location: 'indoor',
      wheelchair: 'limited',
      lit: 'no',
      brand: 'Little Free Library',
      operator: 'Bürgerverein Mitte',
      website: 'https://buergerverein-mitte.example/leseecke',
    });
    expect(Object.keys(tags)).toEqual([...NODE_TAG_KEYS]);
  });

  it('always carries amenity=public_bookcase, and only that when nothing is known', () => {
    expect(nodeTags(library(UNKNOWN), ALL)).toEqual({ amenity: 'public_bookcase' });
    expect(nodeTags(library(UNKNOWN), NONE)).toEqual({ amenity: 'public_bookcase' });
  });

  it('sends no name, brand, operator or website unless staff verified each', () => {
    expect(nodeTags(library(), NONE)).toEqual({
      amenity: 'public_bookcase',
      capacity: '80',
      location: 'indoor',
      wheelchair: 'limited',
      lit: 'no',
    });
    for (const key of ['name', 'brand', 'operator', 'website'] as const) {
      const only = nodeTags(library(), { ...NONE, [key]: true });
      expect(
        Object.keys(only).filter((k) => ['name', 'brand', 'operator', 'website'].includes(k)),
      ).toEqual([key]);
    }
  });

  describe('name', () => {
    it('is never an AI-generated name, even when marked verified', () => {
      const tags = nodeTags(library({ aiGeneratedFields: ['name', 'description'] }), ALL);
      expect(tags).not.toHaveProperty('name');
      expect(nodeTags(library({ aiGeneratedFields: ['description'] }), ALL)).toHaveProperty('name');
    });

    it.each([
      ...GENERIC_NAMES,
      'PUBLIC BOOKCASE',
      'Public Bookcase.',
      '  bücherschrank ',
      'Offener Bücherschrank',
      'OFFENER BUCHERSCHRANK',
      'Little-Free-Library',
      'Boite a livres',
    ])('is never the generic display name %j', (name) => {
      expect(isGenericName(name)).toBe(true);
      expect(nodeTags(library({ name }), ALL)).not.toHaveProperty('name');
    });

    it.each(['Bücherschrank am Lindenplatz', 'Little Free Library #12345', 'Leseecke'])(
      'keeps the proper name %j',
      (name) => {
        expect(nodeTags(library({ name }), ALL).name).toBe(name);
      },
    );

    it('is trimmed and single-lined', () => {
      expect(nodeTags(library({ name: '  Leseecke\n am\tPark  ' }), ALL).name).toBe(
        'Leseecke am Park',
      );
    });

    it('is left out when blank or over 255 code points, kept at exactly 255', () => {
      expect(nodeTags(library({ name: '   ' }), ALL)).not.toHaveProperty('name');
      expect(nodeTags(library({ name: 'x'.repeat(256) }), ALL)).not.toHaveProperty('name');
      expect(nodeTags(library({ name: 'x'.repeat(255) }), ALL).name).toHaveLength(255);
      const emoji = '📚'.repeat(255);
      expect(nodeTags(library({ name: emoji }), ALL).name).toBe(emoji);
      expect(nodeTags(library({ name: `${emoji}📚` }), ALL)).not.toHaveProperty('name');
    });
  });

  it.each([
    [1, '1'],
    [80, '80'],
    [0, undefined],
    [-3, undefined],
    [2.5, undefined],
    [Number.NaN, undefined],
    [1e21, undefined],
    [null, undefined],
  ])('capacity %p → %p', (capacity, expected) => {
    expect(nodeTags(library({ capacity }), ALL).capacity).toBe(expected);
  });

  it.each([
    [true, 'indoor'],
    [false, undefined],
    [null, undefined],
  ])('isIndoor %p → location %p', (isIndoor, expected) => {
    expect(nodeTags(library({ isIndoor }), ALL).location).toBe(expected);
  });

  it.each([
    ['yes', 'yes'],
    ['no', 'no'],
    ['limited', 'limited'],
    ['', undefined],
    ['unknown', undefined],
    ['Yes', undefined],
  ])('wheelchairAccessible %p → wheelchair %p', (value, expected) => {
    const tags = nodeTags(
      library({ wheelchairAccessible: value as LibraryFacts['wheelchairAccessible'] }),
      ALL,
    );
    expect(tags.wheelchair).toBe(expected);
  });

  it.each([
    [true, 'yes'],
    [false, 'no'],
    [null, undefined],
  ])('isLit %p → lit %p', (isLit, expected) => {
    expect(nodeTags(library({ isLit }), ALL).lit).toBe(expected);
  });

  it.each([
    ['https://example.org/bookcase', true],
    ['http://example.org', true],
    ['  https://example.org/x  ', true],
    ['example.org', false],
    ['ftp://example.org/file', false],
    ['javascript:alert(1)', false],
    ['mailto:someone@example.org', false],
    ['https://user:secret@example.org/', false],
    ['https://example.org/media/photos/abc.jpg', false],
    ['https://example.org/a b', false],
  ])('website %j sent: %s', (website, expected) => {
    expect(nodeTags(library({ website }), ALL).website !== undefined).toBe(expected);
  });

  it('never sends what the spec forbids, even when it is on the object at run time', () => {
    const extra = {
      description: 'SENTINEL-description',
      contact: 'SENTINEL-contact@example.org',
      email: 'SENTINEL-email',
      phone: 'SENTINEL-phone',
      photoKey: 'SENTINEL-photo.jpg',
      thumbnailKey: 'SENTINEL-thumb.jpg',
      caption: 'SENTINEL-caption',
      slug: 'SENTINEL-slug',
      city: 'SENTINEL-city',
      country: 'SENTINEL-country',
      postalCode: 'SENTINEL-postal',
      createdAt: 'SENTINEL-created',
      rejectionReason: 'SENTINEL-reason',
    };
    const facts = {
      ...library({
        address: 'SENTINEL-address 1',
        source: 'SENTINEL-source',
        externalId: 'SENTINEL-external',
        id: 987654,
        createdBy: 123456,
      }),
      ...extra,
    } as LibraryFacts;
    const json = JSON.stringify(nodeTags(facts, ALL));
    expect(json).not.toMatch(/SENTINEL|987654|123456|approved|user/);
  });

  it('only ever yields allowlisted keys with clean, non-empty values of at most 255 code points (property)', () => {
    fc.assert(
      fc.property(arbitraryLibrary(), arbitraryVerified(), (facts, verified) => {
        const tags = nodeTags(facts, verified);
        expect(tags.amenity).toBe('public_bookcase');
        for (const [key, value] of Object.entries(tags)) {
          expect(NODE_TAG_KEYS).toContain(key);
          expect(typeof value).toBe('string');
          expect(value.length).toBeGreaterThan(0);
          expect(codePoints(value)).toBeLessThanOrEqual(MAX_TAG_VALUE_LENGTH);
          expect(value).toBe(value.trim());
          expect(value).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('every value comes from an allowed field, never from address, description or contact (property)', () => {
    const clean = (text: string) =>
      text
        .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ')
        .replace(/\s+/gu, ' ')
        .trim();
    fc.assert(
      fc.property(
        arbitraryLibrary(),
        arbitraryVerified(),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        (facts, verified, description, contact) => {
          const withPrivate = { ...facts, description, contact } as LibraryFacts;
          const tags = nodeTags(withPrivate, verified);
          const allowed = new Set([
            'public_bookcase',
            'indoor',
            'yes',
            'no',
            'limited',
            String(facts.capacity),
            ...(verified.name && !facts.aiGeneratedFields.includes('name')
              ? [clean(facts.name)]
              : []),
            ...(verified.brand ? [clean(facts.brand)] : []),
            ...(verified.operator ? [clean(facts.operator)] : []),
            ...(verified.website ? [clean(facts.website)] : []),
          ]);
          for (const value of Object.values(tags)) expect(allowed).toContain(value);
          for (const secret of [facts.address, description, contact].map(clean)) {
            if (secret !== '' && !allowed.has(secret))
              expect(Object.values(tags)).not.toContain(secret);
          }
          if (facts.aiGeneratedFields.includes('name')) expect(tags).not.toHaveProperty('name');
          if (!verified.name) expect(tags).not.toHaveProperty('name');
        },
      ),
      { numRuns: 500 },
    );
  });
});

function arbitraryVerified(): fc.Arbitrary<VerifiedValues> {
  return fc.record({
    name: fc.boolean(),
    brand: fc.boolean(),
    operator: fc.boolean(),
    website: fc.boolean(),
  });
}

function arbitraryLibrary(): fc.Arbitrary<LibraryFacts> {
  const text = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.string({ unit: 'grapheme', maxLength: 300 }),
    fc.constantFrom(
      '',
      '  ',
      'Public bookcase',
      'Leseecke',
      '\n',
      'x'.repeat(255),
      'y'.repeat(256),
    ),
  );
  const website = fc.oneof(
    text,
    fc.webUrl(),
    fc.constantFrom(
      'https://example.org',
      'ftp://x',
      'https://u:p@example.org',
      'https://e.org/p.png',
    ),
  );
  return fc.record({
    id: fc.nat(),
    status: fc.constantFrom('pending', 'approved', 'rejected' as const),
    submissionOrigin: fc.constantFrom('legacy', 'user', 'staff', 'import' as const),
    createdBy: fc.option(fc.nat(), { nil: null }),
    mapdbSubmissionAllowed: fc.boolean(),
    source: text,
    externalId: text,
    hasPendingChanges: fc.boolean(),
    hasPendingPhoto: fc.boolean(),
    name: text,
    address: text,
    lat: fc.double({ min: -90, max: 90, noNaN: true }),
    lng: fc.double({ min: -180, max: 180, noNaN: true }),
    capacity: fc.option(fc.oneof(fc.integer(), fc.double()), { nil: null }),
    isIndoor: fc.option(fc.boolean(), { nil: null }),
    isLit: fc.option(fc.boolean(), { nil: null }),
    wheelchairAccessible: fc.constantFrom('', 'yes', 'no', 'limited' as const),
    brand: text,
    operator: text,
    website,
    aiGeneratedFields: fc.subarray(['name', 'description']),
  });
}
