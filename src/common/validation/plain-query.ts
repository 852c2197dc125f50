import type { Type } from '@nestjs/common';

/**
 * A query DTO's own reader of plainly valid queries: the DTO exactly as class-transformer and class-validator would
 * give it (same class, same fields and values), or null whenever it is not sure, and the query then goes through
 * the whole validation stack, which alone reports errors. Only for hot routes whose parameters are simple text:
 * class-validator's generic walk of a list query's 5–7 parameters cost about 0.05 ms of Node CPU per request at 1M
 * (issue 22, `list-filters`), a fifth of that route's Node time above the bench's ceiling.
 */
export type PlainQueryReader<T> = (query: Readonly<Record<string, unknown>>) => T | null;

const readers = new WeakMap<Type, PlainQueryReader<object>>();

/** Registers `read` for the query DTO class `type` (ApiValidationPipe asks it first). */
export function readPlainQueriesWith<T extends object>(
  type: Type<T>,
  read: PlainQueryReader<T>,
): void {
  readers.set(type, read);
}

/** The reader registered for `type`, if any. */
export function plainQueryReader(type: Type | undefined): PlainQueryReader<object> | undefined {
  return type === undefined ? undefined : readers.get(type);
}

/** A query string's parameter as ToInt, then IsInt and a range, accept it; undefined when they would not. */
export function plainInt(raw: unknown, min: number, max: number): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  if (!/^[-+]?\d{1,15}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/** As ToNumber, then IsNumber (finite) and a range, accept it; undefined when they would not. */
export function plainNumber(raw: unknown, min: number, max: number): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) && value >= min && value <= max ? value : undefined;
}

/** As ToBoolean, then IsBoolean, accept it; undefined when they would not. */
export function plainBoolean(raw: unknown): boolean | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim().toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return undefined;
}

/**
 * As OptionalText(max) (Trim, IsString, NoNul, MaxLength, MaxChars) accepts it, when that is sure: at most `max`
 * UTF-16 units after trimming, which MaxLength's and MaxChars' counts never exceed; undefined otherwise.
 */
export function plainText(raw: unknown, max: number): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  return text.length <= max && !text.includes('\u0000') ? text : undefined;
}
