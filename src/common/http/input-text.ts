import { isUtf8 } from 'node:buffer';
import type { ValidationErrorItem } from '../errors/api-error.js';

/**
 * Bytes no text field of ours can hold: a NUL (PostgreSQL text refuses it) or a sequence that is not UTF-8 (the
 * parsers would store U+FFFD instead of what was sent). Every check here is iterative: input depth never grows the
 * stack.
 */
export const BAD_TEXT_MESSAGE = 'Must not contain NUL bytes or invalid UTF-8.';
export const BAD_TEXT_TYPE = 'invalid_characters';

/** JSON bodies nested deeper than this are refused (400) before they are parsed. */
export const MAX_JSON_DEPTH = 32;

const REPLACEMENT = '\uFFFD';

function badItem(loc: (string | number)[]): ValidationErrorItem {
  return { loc, msg: BAD_TEXT_MESSAGE, type: BAD_TEXT_TYPE };
}

const HEX = /^[0-9a-fA-F]{2}$/;

/**
 * The bytes of a percent-encoded component whose other characters are raw bytes (Node gives a request target and
 * we give a form body as latin1 text). Malformed escapes stay literal, as querystring leaves them.
 */
function unescapeBytes(component: string): Buffer {
  const bytes = Buffer.alloc(component.length);
  let length = 0;
  for (let i = 0; i < component.length; i += 1) {
    const pair = component.slice(i + 1, i + 3);
    if (component[i] === '%' && HEX.test(pair)) {
      bytes[length] = parseInt(pair, 16);
      i += 2;
    } else {
      bytes[length] = component.charCodeAt(i) & 0xff;
    }
    length += 1;
  }
  return bytes.subarray(0, length);
}

/**
 * Printable ASCII without `%`: clean UTF-8 without NUL whatever it is, with nothing to decode (most paths and
 * queries). Tested first: decoding byte by byte cost 5–10 µs per list query of five parameters (issue 22).
 */
const PLAIN_COMPONENT = /^[\x20-\x24\x26-\x7e]*$/;

/** A percent-encoded component (path segment, query or form name/value) whose bytes are not clean UTF-8 text. */
export function badEncodedComponent(component: string): boolean {
  if (PLAIN_COMPONENT.test(component)) return false;
  const bytes = unescapeBytes(component);
  return bytes.includes(0) || !isUtf8(bytes);
}

/**
 * The fields of an `application/x-www-form-urlencoded` string (a query string or a form body) whose name or value
 * holds bad bytes, as 422 items under `location`.
 */
export function badEncodedPairs(raw: string, location: string): ValidationErrorItem[] {
  const items: ValidationErrorItem[] = [];
  if (PLAIN_COMPONENT.test(raw)) return items;
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    const value = equals < 0 ? '' : pair.slice(equals + 1);
    if (badEncodedComponent(name) || badEncodedComponent(value)) {
      const readable = unescapeBytes(name.replace(/\+/g, ' ')).toString('utf8');
      items.push(badItem([location, readable.replace(/[\0\uFFFD]/g, '')]));
    }
  }
  return items;
}

export interface BodyInspection {
  /** Nested deeper than MAX_JSON_DEPTH (checked again after parsing: a non-UTF-8 JSON body skips the byte scan). */
  tooDeep: boolean;
  /** Strings (keys or values) holding a NUL, or U+FFFD when the raw bytes were not UTF-8, as 422 items. */
  items: ValidationErrorItem[];
}

/**
 * Walks a parsed body with an explicit stack. `replacementIsBad`: the raw bytes were not UTF-8, so every U+FFFD
 * stands for bytes the client sent that the parser could not decode.
 */
export function inspectBody(
  value: unknown,
  location: string,
  replacementIsBad: boolean,
): BodyInspection {
  const bad = (text: string) =>
    text.includes('\0') || (replacementIsBad && text.includes(REPLACEMENT));
  const items: ValidationErrorItem[] = [];
  const stack: { value: unknown; loc: (string | number)[] }[] = [{ value, loc: [location] }];
  while (stack.length && items.length < 20) {
    const { value: current, loc } = stack.pop()!;
    if (typeof current === 'string') {
      if (bad(current)) items.push(badItem(loc));
      continue;
    }
    if (!current || typeof current !== 'object') continue;
    if (loc.length > MAX_JSON_DEPTH) return { tooDeep: true, items };
    if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, loc: [...loc, index] }));
    } else {
      for (const [key, item] of Object.entries(current)) {
        if (bad(key)) items.push(badItem([...loc, key.replace(/[\0\uFFFD]/g, '')]));
        else stack.push({ value: item, loc: [...loc, key] });
      }
    }
  }
  return { tooDeep: false, items };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** True when the JSON text in `bytes` opens more than `limit` nested arrays/objects (one pass, no parse). */
export function jsonNestingExceeds(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}
