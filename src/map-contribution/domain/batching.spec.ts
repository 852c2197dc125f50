import fc from 'fast-check';
import { DEFAULT_BATCH_LIMITS, planBatches } from './batching.js';
import { haversineMeters } from './duplicates.js';
import { comparisonKey } from './normalise.js';
import type { BatchCandidate } from './types.js';

const METRES_PER_DEGREE_LAT = 111_195;

/** A library `north` metres north of a city's reference point. */
function at(
  slug: string,
  north: number,
  city = 'Berlin',
  country = 'DE',
  east = 0,
): BatchCandidate {
  return {
    slug,
    lat: 52.5 + north / METRES_PER_DEGREE_LAT,
    lng: 13.4 + east / (METRES_PER_DEGREE_LAT * Math.cos((52.5 * Math.PI) / 180)),
    city,
    country,
  };
}

const slugs = (batches: ReturnType<typeof planBatches>) =>
  batches.map((b) => b.items.map((i) => i.slug));

describe('planBatches', () => {
  it('defaults to 2 km and 10 libraries', () => {
    expect(DEFAULT_BATCH_LIMITS).toEqual({ maxSpanMeters: 2000, maxSize: 10 });
    expect(planBatches([])).toEqual([]);
  });

  it('groups libraries of one city within the span into one batch, items by slug', () => {
    const batches = planBatches([at('c', 300), at('a', 0), at('b', 900)]);
    expect(batches).toEqual([
      { city: 'Berlin', country: 'DE', items: [at('a', 0), at('b', 900), at('c', 300)] },
    ]);
  });

  it('never spans two cities, however close', () => {
    const batches = planBatches([
      at('a', 0, 'Berlin'),
      at('b', 5, 'Potsdam'),
      at('c', 10, 'Berlin'),
    ]);
    expect(slugs(batches)).toEqual([['a', 'c'], ['b']]);
  });

  it('never spans two countries with one city name', () => {
    const batches = planBatches([at('a', 0, 'Frankfurt', 'DE'), at('b', 0, 'Frankfurt', 'AT')]);
    expect(batches.map((b) => b.country)).toEqual(['AT', 'DE']);
  });

  it('compares city and country without case, accents or punctuation', () => {
    const batches = planBatches([
      at('a', 0, 'München', 'de'),
      at('b', 10, 'MUNCHEN', 'DE'),
      at('c', 20, ' münchen. ', ' De '),
    ]);
    expect(slugs(batches)).toEqual([['a', 'b', 'c']]);
  });

  it('keeps every pair within the span (diameter, not radius)', () => {
    const batches = planBatches([at('a', 0), at('b', 1500), at('c', 3000), at('d', -1500)]);
    // seed a takes its nearest that fit: b (1500) then d (-1500) would make b–d 3000 m apart → refused
    expect(slugs(batches)).toEqual([['a', 'b'], ['c'], ['d']]);
    for (const batch of batches) {
      for (const x of batch.items) {
        for (const y of batch.items) expect(haversineMeters(x, y)).toBeLessThanOrEqual(2000);
      }
    }
  });

  it('takes the span boundary inclusively', () => {
    const a = at('a', 0);
    const b = at('b', 2000);
    const span = haversineMeters(a, b);
    expect(slugs(planBatches([a, b], { maxSpanMeters: span, maxSize: 10 }))).toEqual([['a', 'b']]);
    expect(slugs(planBatches([a, b], { maxSpanMeters: span - 0.01, maxSize: 10 }))).toEqual([
      ['a'],
      ['b'],
    ]);
  });

  it('splits by the maximum size', () => {
    const many = Array.from({ length: 25 }, (_, i) => at(`lib-${String(i).padStart(2, '0')}`, i));
    expect(planBatches(many).map((b) => b.items.length)).toEqual([10, 10, 5]);
    expect(planBatches(many, { maxSpanMeters: 2000, maxSize: 1 })).toHaveLength(25);
  });

  it('puts a library without city or country, or with a bad position, alone', () => {
    const batches = planBatches([
      at('a', 0),
      at('b', 1, ''),
      at('c', 2, 'Berlin', ''),
      { ...at('d', 3), lat: Number.NaN },
      { ...at('e', 4), lat: 91 },
      at('f', 5),
    ]);
    expect(slugs(batches).sort()).toEqual([['a', 'f'], ['b'], ['c'], ['d'], ['e']]);
  });

  it('takes a repeated slug once', () => {
    expect(slugs(planBatches([at('a', 0), at('a', 10), at('b', 5)]))).toEqual([['a', 'b']]);
  });

  it('rejects nonsensical limits', () => {
    for (const limits of [
      { maxSpanMeters: -1, maxSize: 10 },
      { maxSpanMeters: Number.NaN, maxSize: 10 },
      { maxSpanMeters: 2000, maxSize: 0 },
      { maxSpanMeters: 2000, maxSize: 2.5 },
    ]) {
      expect(() => planBatches([at('a', 0)], limits)).toThrow(RangeError);
    }
  });

  const CITIES = [
    ['Berlin', 'DE'],
    ['berlin', 'de'],
    ['Potsdam', 'DE'],
    ['Berlin', 'US'],
    ['', 'DE'],
  ] as const;
  const arbitraryCandidates = fc.uniqueArray(
    fc.record({
      slug: fc.stringMatching(/^[a-z]{1,6}$/),
      north: fc.integer({ min: -4000, max: 4000 }),
      east: fc.integer({ min: -4000, max: 4000 }),
      place: fc.constantFrom(...CITIES),
    }),
    { selector: (c) => c.slug, maxLength: 40 },
  );
  const arbitraryLimits = fc.record({
    maxSpanMeters: fc.integer({ min: 0, max: 5000 }),
    maxSize: fc.integer({ min: 1, max: 12 }),
  });

  it('never mixes cities, respects span and size, and places every library exactly once (property)', () => {
    fc.assert(
      fc.property(arbitraryCandidates, arbitraryLimits, (raw, limits) => {
        const input = raw.map((c) => at(c.slug, c.north, c.place[0], c.place[1], c.east));
        const batches = planBatches(input, limits);
        const placed = batches.flatMap((b) => b.items.map((i) => i.slug)).sort();
        expect(placed).toEqual(input.map((c) => c.slug).sort());
        for (const batch of batches) {
          expect(batch.items.length).toBeGreaterThan(0);
          expect(batch.items.length).toBeLessThanOrEqual(limits.maxSize);
          const areas = new Set(
            batch.items.map((i) => `${i.country.toUpperCase()}|${comparisonKey(i.city)}`),
          );
          expect(areas.size).toBe(1);
          if (batch.items.length > 1) expect(comparisonKey(batch.city)).not.toBe('');
          for (const x of batch.items) {
            for (const y of batch.items) {
              expect(haversineMeters(x, y)).toBeLessThanOrEqual(limits.maxSpanMeters);
            }
          }
        }
      }),
    );
  });

  it('gives the same batches whatever the input order (property)', () => {
    fc.assert(
      fc.property(arbitraryCandidates, arbitraryLimits, fc.nat(), (raw, limits, seed) => {
        const input = raw.map((c) => at(c.slug, c.north, c.place[0], c.place[1], c.east));
        const shuffled = input
          .map((c, i) => ({ c, k: (i * 7919 + seed) % 101 }))
          .sort((a, b) => a.k - b.k)
          .map(({ c }) => c);
        expect(planBatches(shuffled, limits)).toEqual(planBatches(input, limits));
      }),
    );
  });
});
