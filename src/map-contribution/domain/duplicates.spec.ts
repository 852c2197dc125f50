import {
  BOOKCASE_NEAR_METERS,
  evaluateDuplicates,
  queryRadiusMeters,
  type DuplicateOptions,
} from './duplicates.js';
import type { DuplicateSignal, MapCandidate } from './types.js';
import { LIBRARY, bookcase, candidate, options, signalsFor } from './duplicates-fixtures.js';

describe('evaluateDuplicates: each blocking signal alone', () => {
  const SIGNALS: [DuplicateSignal, string, MapCandidate, Partial<DuplicateOptions>][] = [
    ['bookcase_within_25m', 'unnamed bookcase at 25 m', bookcase(25), {}],
    [
      'bookcase_within_25m',
      'differently named bookcase at 3 m',
      bookcase(3, { name: 'Leseecke' }),
      {},
    ],
    [
      'bookcase_same_name',
      'same name at 60 m',
      bookcase(60, { name: 'Bücherschrank am Park' }),
      {},
    ],
    [
      'bookcase_same_name',
      'same name at 100 m',
      bookcase(100, { name: 'Bücherschrank am Park' }),
      {},
    ],
    [
      'bookcase_same_name',
      'case, accents and punctuation differ',
      bookcase(70, { name: '  BUCHERSCHRANK, am Park! ' }),
      {},
    ],
    [
      'bookcase_same_address',
      'same street and number at 80 m',
      bookcase(80, { 'addr:street': 'Lindenweg', 'addr:housenumber': '12' }),
      {},
    ],
    [
      'bookcase_same_address',
      'number in a list',
      bookcase(80, { 'addr:street': 'lindenweg', 'addr:housenumber': '10;12' }),
      {},
    ],
    [
      'brand_or_operator_match',
      'give box with our operator',
      candidate(90, { amenity: 'give_box', operator: 'BÜRGERVEREIN MITTE' }),
      {},
    ],
    [
      'brand_or_operator_match',
      'library with our operator as its brand',
      candidate(90, { amenity: 'library', brand: 'Bürgerverein-Mitte' }),
      {},
    ],
    [
      'brand_or_operator_match',
      'bookcase with our operator at 50 m',
      bookcase(50, { operator: 'Bürgerverein Mitte' }),
      {},
    ],
    [
      'element_already_linked',
      'a book shop linked to another library',
      candidate(90, { shop: 'books' }, 'node', 77),
      { linkedElements: new Set(['node/77']) },
    ],
    [
      'element_already_linked',
      'a way linked to another library',
      candidate(40, { amenity: 'library' }, 'way', 78),
      { linkedElements: new Set(['way/78']) },
    ],
  ];

  it.each(SIGNALS)('%s: %s', (signal, _label, found, opts) => {
    const result = signalsFor([found], opts);
    expect(result.blocking).toBe(true);
    expect(result.signals).toEqual([[signal]]);
    expect(result.warnings).toEqual([]);
  });

  it('covers all five signals', () => {
    expect(new Set(SIGNALS.map(([signal]) => signal)).size).toBe(5);
  });

  it('reports every signal a candidate triggers, in the spec order', () => {
    const all = bookcase(
      10,
      {
        name: 'Bücherschrank am Park',
        'addr:street': 'Lindenweg',
        'addr:housenumber': '12',
        operator: 'Bürgerverein Mitte',
      },
      5,
    );
    expect(signalsFor([all], { linkedElements: new Set(['node/5']) }).signals).toEqual([
      [
        'bookcase_within_25m',
        'bookcase_same_name',
        'bookcase_same_address',
        'brand_or_operator_match',
        'element_already_linked',
      ],
    ]);
  });
});

describe('evaluateDuplicates: distances', () => {
  it('25 m blocks, 25.01 m and 26 m do not (signal 1 is fixed at 25 m)', () => {
    expect(signalsFor([bookcase(25)]).blocking).toBe(true);
    expect(signalsFor([bookcase(25.01)]).blocking).toBe(false);
    expect(signalsFor([bookcase(26)]).blocking).toBe(false);
    expect(BOOKCASE_NEAR_METERS).toBe(25);
  });

  it('signal 1 stays 25 m whatever the radius', () => {
    expect(signalsFor([bookcase(30)], { radiusMeters: 500 }).blocking).toBe(false);
    expect(signalsFor([bookcase(24)], { radiusMeters: 10 }).blocking).toBe(true);
    expect(queryRadiusMeters(10)).toBe(25);
    expect(queryRadiusMeters(100)).toBe(100);
  });

  it('100 m blocks, 101 m is beyond the radius and ignored', () => {
    const named = { name: 'Bücherschrank am Park' };
    expect(signalsFor([bookcase(100, named)]).blocking).toBe(true);
    const beyond = signalsFor([bookcase(101, named)]);
    expect(beyond).toMatchObject({ blocking: false, candidates: [], warnings: [] });
    const library = candidate(101, { amenity: 'library' });
    expect(signalsFor([library]).candidates).toEqual([]);
  });

  it('the radius is configurable for signals 2–4', () => {
    const named = bookcase(140, { name: 'Bücherschrank am Park' });
    expect(signalsFor([named], { radiusMeters: 150 }).blocking).toBe(true);
    expect(signalsFor([named], { radiusMeters: 139 }).candidates).toEqual([]);
    const operator = candidate(140, { amenity: 'give_box', operator: 'Bürgerverein Mitte' });
    expect(signalsFor([operator], { radiusMeters: 150 }).blocking).toBe(true);
  });

  it('rejects a radius that is not a positive number', () => {
    for (const radiusMeters of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => evaluateDuplicates(LIBRARY, [], options({ radiusMeters }))).toThrow(RangeError);
    }
  });
});

describe('evaluateDuplicates: names and addresses', () => {
  it('a different name is no signal beyond 25 m, and never proves absence', () => {
    const result = signalsFor([bookcase(40, { name: 'Leseecke' })]);
    expect(result.blocking).toBe(false);
    expect(result.warnings[0]).toMatch(/Missing tags never prove/);
  });

  it('an empty name on either side never matches', () => {
    expect(signalsFor([bookcase(40, { name: '' })]).blocking).toBe(false);
    expect(signalsFor([bookcase(40, { name: 'X' })], {}, { ...LIBRARY, name: '' }).blocking).toBe(
      false,
    );
    expect(
      signalsFor([bookcase(40, { name: '!!!' })], {}, { ...LIBRARY, name: '...' }).blocking,
    ).toBe(false);
  });

  it.each([
    ['street and number both sides, equal', 'Lindenweg 12', 'Lindenweg', '12', true],
    ['abbreviated street', 'Hauptstr. 5', 'Hauptstraße', '5', true],
    ['house number letter case and spacing', 'Am Markt 3a', 'Am Markt', '3 A', true],
    ['number differs', 'Lindenweg 12', 'Lindenweg', '14', false],
    ['street differs', 'Lindenweg 12', 'Lindenstraße', '12', false],
    ['we have no house number', 'Lindenweg', 'Lindenweg', '12', false],
    ['we have no street', '12', 'Lindenweg', '12', false],
    ['they have no house number', 'Lindenweg 12', 'Lindenweg', '', false],
    ['they have no street', 'Lindenweg 12', '', '12', false],
    ['we have no address', '', 'Lindenweg', '12', false],
  ])('address: %s → %s', (_label, address, street, number, expected) => {
    const tags: Record<string, string> = {};
    if (street) tags['addr:street'] = street;
    if (number) tags['addr:housenumber'] = number;
    const result = signalsFor([bookcase(60, tags)], {}, { ...LIBRARY, address });
    expect(result.blocking).toBe(expected);
  });

  it('address and name signals need an amenity=public_bookcase', () => {
    const shop = candidate(30, {
      shop: 'books',
      name: 'Bücherschrank am Park',
      'addr:street': 'Lindenweg',
      'addr:housenumber': '12',
    });
    expect(signalsFor([shop]).blocking).toBe(false);
  });

  it('counts amenity lists (public_bookcase;give_box)', () => {
    expect(signalsFor([candidate(10, { amenity: 'give_box;public_bookcase' })]).blocking).toBe(
      true,
    );
  });
});

describe('evaluateDuplicates: brand and operator (signal 4)', () => {
  it.each([
    ['amenity', 'public_bookcase', true],
    ['amenity', 'give_box', true],
    ['amenity', 'library', true],
    ['shop', 'books', false],
    ['amenity', 'cafe', false],
  ])('%s=%s with our operator → blocks %s', (key, value, expected) => {
    const result = signalsFor([candidate(80, { [key]: value, operator: 'Bürgerverein Mitte' })]);
    expect(result.blocking).toBe(expected);
    if (!expected) expect(result.warnings).toHaveLength(1);
  });

  it('brand matches brand, and brand and operator match across', () => {
    const library = { ...LIBRARY, brand: 'Little Free Library', operator: '' };
    expect(
      signalsFor(
        [candidate(80, { amenity: 'give_box', brand: 'little free library' })],
        {},
        library,
      ).blocking,
    ).toBe(true);
    expect(
      signalsFor(
        [candidate(80, { amenity: 'give_box', operator: 'Little Free-Library' })],
        {},
        library,
      ).blocking,
    ).toBe(true);
  });

  it('blank brand and operator on both sides never match', () => {
    const library = { ...LIBRARY, brand: '', operator: '' };
    expect(
      signalsFor([candidate(80, { amenity: 'give_box', brand: '', operator: '' })], {}, library)
        .blocking,
    ).toBe(false);
  });
});

describe('evaluateDuplicates: warnings and resolutions', () => {
  it.each([
    [
      { amenity: 'library', name: 'Stadtbibliothek' },
      /^Library nearby: node\/\d+ "Stadtbibliothek" at 40 m/,
    ],
    [{ amenity: 'give_box' }, /^Give box nearby/],
    [{ shop: 'books' }, /^Book shop nearby/],
    [{ amenity: 'public_bookcase' }, /^Public bookcase nearby/],
    [{ tourism: 'information' }, /^Other map feature nearby/],
  ])('%j without a signal is a warning only', (tags, message) => {
    const result = signalsFor([candidate(40, tags)]);
    expect(result.blocking).toBe(false);
    expect(result.warnings).toEqual([expect.stringMatching(message)]);
    expect(result.candidates).toHaveLength(1);
    expect(result.candidates[0].signals).toEqual([]);
  });

  it('a candidate resolved as a different feature does not block but is listed and warned', () => {
    const near = bookcase(10, { name: 'Bücherschrank am Park' }, 31);
    const result = signalsFor([near], { resolvedDifferent: new Set(['node/31']) });
    expect(result.blocking).toBe(false);
    expect(result.candidates).toEqual([
      expect.objectContaining({
        id: 31,
        signals: ['bookcase_within_25m', 'bookcase_same_name'],
        resolved_different: true,
      }),
    ]);
    expect(result.warnings).toEqual([
      expect.stringMatching(/^Resolved by staff as a different feature: node\/31/),
    ]);
  });

  it('a resolution covers only its own element', () => {
    const resolved = bookcase(10, {}, 31);
    const other = bookcase(12, {}, 32);
    const result = signalsFor([resolved, other], { resolvedDifferent: new Set(['node/31']) });
    expect(result.blocking).toBe(true);
    expect(result.warnings).toHaveLength(1);
    expect(
      signalsFor([bookcase(10, {}, 31)], { resolvedDifferent: new Set(['way/31']) }).blocking,
    ).toBe(true);
  });

  it('a linked element resolved as different does not block', () => {
    const linked = candidate(60, { amenity: 'library' }, 'node', 9);
    const result = signalsFor([linked], {
      linkedElements: new Set(['node/9']),
      resolvedDifferent: new Set(['node/9']),
    });
    expect(result.blocking).toBe(false);
  });
});
