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
 * The milliseconds since the epoch of `timestamptz` text in the form PostgreSQL sends in a UTC session,
 * `YYYY-MM-DD HH:MM:SS[.f…]+00` (years 1000–9999), as pg's own parser computes them; NaN for anything else. The fraction
 * is read with pg's parser's own arithmetic (`1000 * parseFloat(fraction)`, truncated by Date.UTC), so both agree on
 * every value. `fields` receives the fields read (year, month, day, hour, minute, second, milliseconds before
 * truncation) for isoTimestamptz.
 */
function utcMilliseconds(text: string, fields: number[] | null): number {
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
    return NaN;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  const hour = digitsAt(text, 11, 13);
  const minute = digitsAt(text, 14, 16);
  const second = digitsAt(text, 17, 19);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return NaN;
  let milliseconds = 0;
  if (length > 22) {
    if (text.charCodeAt(19) !== 46 || length === 23 || digitsAt(text, 20, length - 3) < 0)
      return NaN;
    milliseconds = 1000 * parseFloat(text.slice(19, length - 3));
  }
  if (fields !== null) {
    fields[0] = year;
    fields[1] = month;
    fields[2] = day;
    fields[3] = hour;
    fields[4] = minute;
    fields[5] = second;
    fields[6] = milliseconds;
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, milliseconds);
}

/**
 * `timestamptz` text as pg's own parser reads it (the same Date, to the millisecond), without its regular expressions
 * for the form PostgreSQL sends in a UTC session: `YYYY-MM-DD HH:MM:SS[.f…]+00`. Anything else (other offsets, BC,
 * infinity, years before 1000 or after 9999) goes to pg's parser.
 *
 * A list page parses 20 of these per request: pg's parser cost about 0.4 µs each in regular expression matches and
 * their arrays (issue 22, `npm run bench -- --profile`); this costs about half.
 */
export function parseTimestamptz(text: string): unknown {
  const time = utcMilliseconds(text, null);
  return Number.isNaN(time) ? parseTimestamptzSlowly(text) : new Date(time);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isoFields = [0, 0, 0, 0, 0, 0, 0];

/**
 * `timestamptz` text as the text `toISOString()` gives of the Date parseTimestamptz reads from it
 * (`2026-11-25T06:28:41.123Z`), for the UTC form of a valid date and time, without making that Date; anything else is
 * parseTimestamptz's value itself (a Date, or pg's value for infinity), which a reader turns into text as before.
 * The fields are copied from the text (Date.UTC would move an impossible date such as 02-30, which PostgreSQL never
 * sends, so those go the Date's way), the milliseconds truncated as Date.UTC truncates them.
 *
 * A list page turns 10–50 of these into response text: parsing into a Date and then `toISOString()` cost about
 * 0.7 µs each, this about 0.15 (issue 22, brief 22n; `npm run bench -- --profile` showed the list item's isoTime
 * and parseTimestamptz at 25–30 µs of a 20-row page).
 */
export function isoTimestamptz(text: string): unknown {
  const time = utcMilliseconds(text, isoFields);
  if (Number.isNaN(time)) return parseTimestamptzSlowly(text);
  const [year, month, day, hour, minute, second, fraction] = isoFields;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > DAYS_IN_MONTH[month - 1] + (leap ? 1 : 0) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return new Date(time);
  const milliseconds = Math.trunc(fraction);
  const ms =
    milliseconds < 10
      ? `00${milliseconds}`
      : milliseconds < 100
        ? `0${milliseconds}`
        : `${milliseconds}`;
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${ms}Z`;
}

/** A set of pg's type parsers, as a query's `types` takes it. */
export interface TypeParsers {
  getTypeParser(oid: number, format?: 'text' | 'binary'): TypeParser;
}

/** pg's type parsers with parseTimestamptz for `timestamptz`: pass as a query's `types`. */
export const FAST_TIMESTAMP_TYPES: TypeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): TypeParser {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format) as TypeParser;
  },
};

/**
 * pg's type parsers with isoTimestamptz for `timestamptz`: rows whose timestamps are only ever sent as ISO 8601 text
 * (a public list page's `created_at`).
 */
export const ISO_TIMESTAMP_TYPES: TypeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): TypeParser {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return isoTimestamptz;
    return pg.types.getTypeParser(oid, format) as TypeParser;
  },
};
