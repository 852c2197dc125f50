import pg from 'pg';

export type TypeParser = (text: string) => unknown;

const TIMESTAMPTZ_OID = 1184;
const ZERO = 48;
const NINE = 57;

/** pg's own parser of `timestamptz` text (postgres-date): every value the fast path below does not take. */
const parseTimestamptzSlowly = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as TypeParser;

function digitsAt(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < ZERO || code > NINE) return -1;
    value = value * 10 + code - ZERO;
  }
  return value;
}

/**
 * `timestamptz` text as pg's own parser reads it (the same Date, to the millisecond), without its regular expressions
 * for the form PostgreSQL sends in a UTC session: `YYYY-MM-DD HH:MM:SS[.f…]+00`. Anything else (other offsets, BC,
 * infinity, years before 1000 or after 9999) goes to pg's parser. The fraction is read with pg's parser's own
 * arithmetic (`1000 * parseFloat(fraction)`, truncated by Date.UTC), so both agree on every value.
 *
 * A list page parses 20 of these per request: pg's parser cost about 0.4 µs each in regular expression matches and
 * their arrays (issue 22, `npm run bench -- --profile`); this costs about half.
 */
export function parseTimestamptz(text: string): unknown {
  const length = text.length;
  if (
    length < 22 ||
    length > 29 ||
    text.charCodeAt(length - 3) !== 43 || // +
    text.charCodeAt(length - 2) !== ZERO ||
    text.charCodeAt(length - 1) !== ZERO ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 || // space
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  )
    return parseTimestamptzSlowly(text);
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  const hour = digitsAt(text, 11, 13);
  const minute = digitsAt(text, 14, 16);
  const second = digitsAt(text, 17, 19);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0)
    return parseTimestamptzSlowly(text);
  let milliseconds = 0;
  if (length > 22) {
    if (text.charCodeAt(19) !== 46 || length === 23 || digitsAt(text, 20, length - 3) < 0)
      return parseTimestamptzSlowly(text);
    milliseconds = 1000 * parseFloat(text.slice(19, length - 3));
  }
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds));
}

/** pg's type parsers with parseTimestamptz for `timestamptz`: pass as a query's `types`. */
export const FAST_TIMESTAMP_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): TypeParser {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format) as TypeParser;
  },
};
