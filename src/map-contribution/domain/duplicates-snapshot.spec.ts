// The candidate snapshot and the distance function (split from duplicates.spec.ts).
import fc from 'fast-check';
import {
  MalformedCandidateError,
  SNAPSHOT_TAG_KEYS,
  elementKey,
  evaluateDuplicates,
  haversineMeters,
} from './duplicates.js';
import type { ElementType, MapCandidate } from './types.js';

import { LIBRARY, bookcase, candidate, options, signalsFor } from './duplicates-fixtures.js';

describe('evaluateDuplicates: snapshot', () => {
  it('keeps only allowlisted public tags', () => {
    const result = signalsFor([
      bookcase(10, {
        name: 'Leseecke',
        'contact:email': 'someone@example.org',
        phone: '+49 30 1234',
        note: 'key at the bakery',
        website: 'https://example.org',
        opening_hours: '24/7',
        fixme: 'check',
      }),
    ]);
    expect(result.candidates[0].tags).toEqual({ amenity: 'public_bookcase', name: 'Leseecke' });
  });

  it('never stores a tag outside the allowlist (property)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.oneof(fc.constantFrom(...SNAPSHOT_TAG_KEYS), fc.string()), fc.string()),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (tags, distance) => {
          const result = evaluateDuplicates(LIBRARY, [candidate(distance, tags)], options());
          for (const snapshot of result.candidates) {
            for (const [key, value] of Object.entries(snapshot.tags)) {
              expect(SNAPSHOT_TAG_KEYS).toContain(key);
              expect(value).toBe(tags[key]);
              expect(value).not.toBe('');
            }
          }
        },
      ),
    );
  });

  it('orders by distance, then node/way/relation, then id, whatever the input order (property)', () => {
    const arbitraryCandidate: fc.Arbitrary<MapCandidate> = fc.record({
      type: fc.constantFrom<ElementType>('node', 'way', 'relation'),
      id: fc.integer({ min: 1, max: 50 }),
      lat: fc.constant(52.52),
      lon: fc.constant(13.405),
      tags: fc.constantFrom<Record<string, string>>(
        {},
        { amenity: 'public_bookcase' },
        { amenity: 'library' },
      ),
      distanceMeters: fc.constantFrom(0, 5, 5, 30, 99.5, 100, 150),
    });
    fc.assert(
      fc.property(fc.array(arbitraryCandidate, { maxLength: 15 }), fc.nat(), (candidates, seed) => {
        const shuffled = [...candidates].sort(
          (a, b) => ((a.id * 31 + seed) % 17) - ((b.id * 31 + seed) % 17),
        );
        const first = evaluateDuplicates(LIBRARY, candidates, options());
        const second = evaluateDuplicates(LIBRARY, shuffled, options());
        expect(second).toEqual(first);
        const keys = first.candidates.map((c) => elementKey(c.type, c.id));
        expect(new Set(keys).size).toBe(keys.length);
        const order = { node: 0, way: 1, relation: 2 };
        for (let i = 1; i < first.candidates.length; i += 1) {
          const [a, b] = [first.candidates[i - 1], first.candidates[i]];
          const rank = a.distance_m - b.distance_m || order[a.type] - order[b.type] || a.id - b.id;
          expect(rank).toBeLessThan(0);
        }
        expect(first.candidates.every((c) => c.distance_m <= 100)).toBe(true);
      }),
    );
  });

  it('takes a repeated element once, at its nearest distance, and rounds distances to 0.1 m', () => {
    const result = signalsFor([
      bookcase(60.04, {}, 5),
      candidate(30.26, { amenity: 'public_bookcase' }, 'node', 5),
    ]);
    expect(result.candidates).toEqual([
      { type: 'node', id: 5, distance_m: 30.3, tags: { amenity: 'public_bookcase' }, signals: [] },
    ]);
  });

  it.each([
    ['a negative distance', { distanceMeters: -1 }],
    ['a NaN distance', { distanceMeters: Number.NaN }],
    ['a fractional id', { id: 1.5 }],
    ['a zero id', { id: 0 }],
    ['an unknown type', { type: 'area' as ElementType }],
    ['missing tags', { tags: null as unknown as Record<string, string> }],
  ])('refuses a malformed candidate: %s', (_label, change) => {
    expect(() => evaluateDuplicates(LIBRARY, [{ ...bookcase(10), ...change }], options())).toThrow(
      MalformedCandidateError,
    );
  });
});

describe('haversineMeters', () => {
  it('measures known distances', () => {
    expect(haversineMeters({ lat: 52.52, lng: 13.405 }, { lat: 52.52, lng: 13.405 })).toBe(0);
    expect(haversineMeters({ lat: 0, lng: 0 }, { lat: 0.001, lon: 0 })).toBeCloseTo(111.19, 1);
    const berlinParis = haversineMeters({ lat: 52.52, lng: 13.405 }, { lat: 48.8566, lon: 2.3522 });
    expect(berlinParis / 1000).toBeCloseTo(877.5, 0);
  });

  it('is symmetric and non-negative (property)', () => {
    const point = fc.record({
      lat: fc.double({ min: -90, max: 90, noNaN: true }),
      lng: fc.double({ min: -180, max: 180, noNaN: true }),
    });
    fc.assert(
      fc.property(point, point, (a, b) => {
        const d = haversineMeters(a, b);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(Math.PI * 6_371_008.8 + 1);
        expect(haversineMeters(b, a)).toBeCloseTo(d, 6);
      }),
    );
  });
});
