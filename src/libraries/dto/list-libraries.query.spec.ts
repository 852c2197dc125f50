import type { ArgumentMetadata } from '@nestjs/common';
import type { ValidatorOptions } from 'class-validator';
import { ApiValidationPipe } from '../../common/validation/validation.pipe.js';
import { ListLibrariesQueryDto, readListQuery } from './list-libraries.query.js';

/** The whole validation stack (class-transformer, class-validator), as for a DTO without a reader of its own. */
class StackOnlyPipe extends ApiValidationPipe {
  protected override plainQuery(): object | null {
    return null;
  }
}

/** The pipe as the app runs it, counting the objects class-validator is asked to validate. */
class CountingPipe extends ApiValidationPipe {
  validated = 0;

  protected override validate(object: object, options?: ValidatorOptions) {
    this.validated += 1;
    return super.validate(object, options);
  }
}

const metadata: ArgumentMetadata = { type: 'query', metatype: ListLibrariesQueryDto };

/** mulberry32: the same queries on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const texts = (max: number) => [
  'books',
  'Köln',
  '',
  ' ',
  ' padded ',
  '\tTab\n',
  'a'.repeat(max),
  'a'.repeat(max + 1),
  ` ${'a'.repeat(max)} `,
  'é'.repeat(max),
  '😀'.repeat(max / 2),
  '😀'.repeat(max / 2 + 1),
  `x${'\uFE0F'.repeat(max)}`,
  'x\u0000y',
  '%_\\',
  ['a', 'b'],
];
const numbers = [
  '0',
  '1',
  '-1',
  '+3',
  ' 4 ',
  '05',
  '1.5',
  '.5',
  '5.',
  '1e1',
  '-1E-2',
  '1e400',
  '-0',
  'NaN',
  'Infinity',
  '0x10',
  '',
  'abc',
  '48.85661',
  '-90',
  '-90.5',
  '90',
  '90.00001',
  '-180',
  '180',
  '180.1',
  '-180.5',
  '0.99',
  '100',
  '100.5',
  '999999999999999',
  '9999999999999999',
  ['1', '2'],
];
/** Values of each parameter, valid and not: whitespace, signs, exponents, limits, lengths, arrays. */
const POOLS: Record<string, unknown[]> = {
  page: [...numbers, '2', '20'],
  page_size: [...numbers, '10', '20', '50', '51'],
  q: texts(200),
  search: texts(200),
  city: texts(100),
  postal_code: [...texts(20), '10', '101', '1'.repeat(20), '1'.repeat(21)],
  country: ['DE', 'de', ' fr ', 'D', 'DEU', '1A', '', 'ÄÖ', 'gB', ['DE', 'FR']],
  has_photo: ['true', 'false', '1', '0', 'TRUE', ' False ', 'yes', '', '2', ['true']],
  lat: [...numbers, '52.52', '-33.9'],
  lng: [...numbers, '13.405', '-70.6'],
  radius_km: [...numbers, '5', '25', '50'],
  foo: ['bar'],
  constructor: ['x'],
};

function randomQuery(random: () => number): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  const keys = Object.keys(POOLS);
  // Mostly the list's own parameters; lat and lng often together, as the apps send them.
  for (const key of keys) {
    const odds = key === 'foo' || key === 'constructor' ? 0.02 : 0.25;
    if (random() < odds) {
      const pool = POOLS[key];
      Object.defineProperty(query, key, {
        value: pool[Math.floor(random() * pool.length)],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  if ('lat' in query && random() < 0.7) query.lng = String((random() - 0.5) * 360);
  return query;
}

/** Queries as the bench's list-filters and proximity-random scenarios send them (bench/realistic-requests.mjs). */
function realisticQuery(random: () => number): Record<string, string> {
  const query: Record<string, string> = {};
  if (random() < 0.5) {
    if (random() < 0.5) query.country = ['DE', 'FR', 'GB', 'NL'][Math.floor(random() * 4)];
    if (random() < 0.3) query.has_photo = String(random() < 0.7);
    if (random() < 0.3) query.city = 'Hamburg'.slice(0, 3 + Math.floor(random() * 5));
    if (random() < 0.15) query.postal_code = '10115'.slice(0, 2 + Math.floor(random() * 2));
    if (random() < 0.3) query.page_size = random() < 0.5 ? '10' : '50';
  } else {
    query.lat = (40 + random() * 20).toFixed(5);
    query.lng = (-10 + random() * 30).toFixed(5);
    if (random() < 0.75) query.radius_km = String([1, 2, 5, 10, 25, 50][Math.floor(random() * 6)]);
  }
  if (random() < 0.5) query.page = String(1 + Math.floor(random() * 20));
  return query;
}

async function stackAnswer(query: Record<string, unknown>): Promise<unknown> {
  try {
    return await new StackOnlyPipe().transform({ ...query }, metadata);
  } catch {
    return null;
  }
}

/** Own keys in order with their values (toEqual tells 0 from -0). */
const fields = (dto: unknown) => Object.entries(dto as object);

describe('readListQuery: a list query read without class-validator', () => {
  it('gives what the validation stack gives, or leaves the query to it (5,000 random queries)', async () => {
    const random = prng(22);
    let read = 0;
    let refused = 0;
    for (let i = 0; i < 5000; i += 1) {
      const query = randomQuery(random);
      const plain = readListQuery(query);
      const stack = await stackAnswer(query);
      if (stack === null) {
        refused += 1;
        expect({ query, plain }).toEqual({ query, plain: null });
        continue;
      }
      if (plain === null) continue;
      read += 1;
      expect(plain).toBeInstanceOf(ListLibrariesQueryDto);
      expect({ query, plain: fields(plain) }).toEqual({ query, plain: fields(stack) });
    }
    // Both kinds occur in numbers: the comparison is not vacuous.
    expect(read).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });

  it('reads every query of the realistic list scenarios, as the stack would', async () => {
    const random = prng(7);
    for (let i = 0; i < 1000; i += 1) {
      const query = realisticQuery(random);
      const plain = readListQuery(query);
      expect(plain).not.toBeNull();
      expect(fields(plain)).toEqual(fields(await stackAnswer(query)));
    }
  });

  it('leaves awkward but valid queries to the stack', async () => {
    for (const query of [
      { q: '😀'.repeat(101) },
      { foo: 'bar' },
      JSON.parse('{"__proto__": "x"}') as Record<string, unknown>,
    ]) {
      expect(readListQuery(query)).toBeNull();
      await expect(stackAnswer(query)).resolves.not.toBeNull();
    }
  });

  it('is what the app pipe answers for a plain query, without asking class-validator', async () => {
    const pipe = new CountingPipe();
    const answer = await pipe.transform(
      { country: 'de', has_photo: 'true', page_size: '50', page: '3' },
      metadata,
    );
    expect(answer).toBeInstanceOf(ListLibrariesQueryDto);
    expect(answer).toEqual({
      ...new ListLibrariesQueryDto(),
      country: 'de',
      has_photo: true,
      page_size: 50,
      page: 3,
    });
    expect(pipe.validated).toBe(0);
    await expect(pipe.transform({ lat: '1' }, metadata)).rejects.toMatchObject({
      errors: expect.arrayContaining([expect.objectContaining({ loc: ['query', 'lng'] })]),
    });
    expect(pipe.validated).toBe(1);
  });
});
