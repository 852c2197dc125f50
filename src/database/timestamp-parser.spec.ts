import pg from 'pg';
import {
  FAST_TIMESTAMP_TYPES,
  ISO_TIMESTAMP_TYPES,
  isoTimestamptz,
  parseTimestamptz,
} from './timestamp-parser.js';

/** pg's own parser (postgres-date), which parseTimestamptz must agree with on every input. */
const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;

function sameValue(text: string): void {
  const expected = pgParse(text);
  const actual = parseTimestamptz(text);
  if (expected instanceof Date) {
    expect(actual).toBeInstanceOf(Date);
    expect([text, (actual as Date).getTime()]).toEqual([text, expected.getTime()]);
  } else {
    expect([text, actual]).toEqual([text, expected]);
  }
}

/** PostgreSQL's text form of a timestamptz in a UTC session: trailing zeros of the fraction dropped. */
function postgresText(epochMs: number, micros: number): string {
  const base = new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
  const fraction = String(micros).padStart(6, '0').replace(/0+$/, '');
  return `${base}${fraction ? `.${fraction}` : ''}+00`;
}

describe('parseTimestamptz', () => {
  it('gives the Date pg gives for the UTC form, every fraction length', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 5000; i++) {
      const epochMs = Math.floor(random() * 4e12) - 1e12; // 1938–2096
      const micros = Math.floor(random() * 1e6);
      const digits = 1 + (i % 6);
      sameValue(
        postgresText(epochMs, Math.floor(micros / 10 ** (6 - digits)) * 10 ** (6 - digits)),
      );
    }
  });

  it('reads a whole second', () => {
    sameValue('2026-11-25 06:28:41+00');
    expect((parseTimestamptz('2026-11-25 06:28:41+00') as Date).toISOString()).toBe(
      '2026-11-25T06:28:41.000Z',
    );
  });

  it('reads fractions of 1 to 6 digits to the millisecond, truncated as pg does', () => {
    for (const fraction of [
      '57',
      '29',
      '58',
      '07',
      '001',
      '999',
      '9999',
      '99999',
      '999999',
      '5',
      '1',
    ])
      sameValue(`2026-11-25 06:28:41.${fraction}+00`);
    expect((parseTimestamptz('2026-11-25 06:28:41.999999+00') as Date).toISOString()).toBe(
      '2026-11-25T06:28:41.999Z',
    );
  });

  it('leaves every other form to pg, with the same result', () => {
    for (const text of [
      '2026-11-25 06:28:41.123+01',
      '2026-11-25 06:28:41.123-03',
      '2026-11-25 06:28:41+05:30',
      '2026-11-25 06:28:41.5-09:30:15',
      '1900-01-01 00:00:00+00:09:21',
      '0099-06-01 12:00:00+00',
      '0999-06-01 12:00:00.25+00',
      '0001-01-01 00:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      'infinity',
      '-infinity',
      '2026-11-25',
      '2026-11-25 06:28:41.+00',
      '2026-11-25 06:28:4x+00',
      '2026-1x-25 06:28:41+00',
    ]) {
      sameValue(text);
    }
  });
});

describe.each([
  ['FAST_TIMESTAMP_TYPES', FAST_TIMESTAMP_TYPES, parseTimestamptz],
  ['ISO_TIMESTAMP_TYPES', ISO_TIMESTAMP_TYPES, isoTimestamptz],
] as const)('%s', (_name, types, parser) => {
  it('parses timestamptz text with its own parser and every other type as pg does', () => {
    expect(types.getTypeParser(1184, 'text')).toBe(parser);
    expect(types.getTypeParser(1184)).toBe(parser);
    for (const oid of [16, 20, 23, 25, 114, 701, 1082, 1114, 1185, 3802])
      expect(types.getTypeParser(oid, 'text')).toBe(pg.types.getTypeParser(oid, 'text'));
    expect(types.getTypeParser(1184, 'binary')).toBe(pg.types.getTypeParser(1184, 'binary'));
  });
});

describe('isoTimestamptz', () => {
  /** What a reader of parseTimestamptz's Date sends: its toISOString(), or the value itself when it is no Date. */
  const viaDate = (text: string) => {
    const value = parseTimestamptz(text);
    return value instanceof Date ? value.toISOString() : value;
  };

  it("is the Date's toISOString() of the UTC form, every fraction length, without the Date", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const differ: string[] = [];
    for (let i = 0; i < 20000; i++) {
      const epochMs = Math.floor(random() * 2.5e14) - 3e13; // years 1019–9891
      const micros = Math.floor(random() * 1e6);
      const digits = 1 + (i % 6);
      const text = postgresText(
        epochMs,
        Math.floor(micros / 10 ** (6 - digits)) * 10 ** (6 - digits),
      );
      const iso = isoTimestamptz(text);
      if (typeof iso !== 'string' || iso !== viaDate(text)) differ.push(text);
    }
    expect(differ).toEqual([]);
  });

  it('truncates every fraction of 1 to 6 digits to the millisecond as Date.UTC does', () => {
    const differ: string[] = [];
    for (let digits = 1; digits <= 6; digits++)
      for (let n = 0; n < 10 ** digits; n++) {
        const text = `2026-11-25 06:28:41.${String(n).padStart(digits, '0')}+00`;
        if (isoTimestamptz(text) !== viaDate(text)) differ.push(text);
      }
    expect(differ).toEqual([]);
    expect(isoTimestamptz('2026-11-25 06:28:41.999999+00')).toBe('2026-11-25T06:28:41.999Z');
    expect(isoTimestamptz('2026-11-25 06:28:41.0071+00')).toBe('2026-11-25T06:28:41.007Z');
    expect(isoTimestamptz('2026-11-25 06:28:41+00')).toBe('2026-11-25T06:28:41.000Z');
  });

  it('writes the last day of every month, leap days included, and the ends of the day', () => {
    for (const text of [
      '2024-02-29 23:59:59.999+00',
      '2000-02-29 00:00:00+00',
      '2026-01-31 12:00:00+00',
      '2026-04-30 12:00:00+00',
      '2026-12-31 23:59:59+00',
      '1000-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999999+00',
    ]) {
      expect(typeof isoTimestamptz(text)).toBe('string');
      expect([text, isoTimestamptz(text)]).toEqual([text, viaDate(text)]);
    }
  });

  it("gives parseTimestamptz's own value for every other form and for impossible dates", () => {
    for (const text of [
      '2026-11-25 06:28:41.123+01',
      '2026-11-25 06:28:41+05:30',
      '1900-01-01 00:00:00+00:09:21',
      '0999-06-01 12:00:00.25+00',
      '0001-01-01 00:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      'infinity',
      '-infinity',
      '2026-11-25 06:28:41.+00',
      '2026-02-30 00:00:00+00',
      '2023-02-29 00:00:00+00',
      '1900-02-29 00:00:00+00',
      '2026-13-01 00:00:00+00',
      '2026-00-10 00:00:00+00',
      '2026-04-31 00:00:00+00',
      '2026-11-00 00:00:00+00',
      '2026-11-25 24:00:00+00',
      '2026-11-25 23:60:00+00',
      '2026-11-25 23:59:60+00',
    ]) {
      const value = isoTimestamptz(text);
      expect(typeof value).not.toBe('string');
      const expected = parseTimestamptz(text);
      if (expected instanceof Date)
        expect([text, (value as Date).getTime()]).toEqual([text, expected.getTime()]);
      else expect([text, value]).toEqual([text, expected]);
    }
  });
});
