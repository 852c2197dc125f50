/**
 * Text normalisation for duplicate signals (api-spec "Duplicate detection": trim, case-fold Unicode, remove
 * punctuation; compare address components only when both sides have them).
 *
 * `normaliseText`: NFKC (full-width and compatibility forms), case fold as lower-upper-lower case with final sigma
 * mapped to sigma (so `ß` and `ẞ` fold to `ss` and `ς` to `σ` as Unicode full case folding does, which plain
 * lower-casing misses; locale-independent, no Turkish dotless-i rule), diacritics removed (NFD minus combining marks:
 * `Bücherschrank` = `Bucherschrank`; this matches more, which only ever adds a block for staff to resolve),
 * punctuation and symbols replaced by a space, whitespace collapsed and trimmed.
 *
 * Equality (`comparisonKey`) also ignores the spaces, so `St.-Georg-Platz`, `St Georg Platz` and `StGeorgPlatz`
 * are one name. Idempotent (checked over every code point of the assigned planes and a million random strings). An empty key never
 * equals anything: a missing value never proves or disproves a duplicate.
 */
export function normaliseText(value: string): string {
  return value
    .normalize('NFKC')
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .replace(/ς/g, 'σ')
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFKC')
    .replace(/[\p{P}\p{S}\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

export function comparisonKey(value: string): string {
  return normaliseText(value).replace(/ /g, '');
}

/** Both keys non-empty and equal. */
export function sameNormalised(
  a: string | null | undefined,
  b: string | null | undefined,
): boolean {
  const left = comparisonKey(a ?? '');
  return left !== '' && left === comparisonKey(b ?? '');
}

/**
 * Street key: the comparison key with the German abbreviation `str.` spelled out (`Hauptstr. 5` is written
 * `Hauptstraße` on the map, whose key is `hauptstrasse`). No other abbreviation is expanded (`St` is Street or
 * Saint).
 */
export function streetKey(street: string): string {
  return normaliseText(street)
    .split(' ')
    .map((word) => (word === 'str' || word.endsWith('str') ? `${word}asse` : word))
    .join('');
}

export function houseNumberKey(houseNumber: string): string {
  return comparisonKey(houseNumber);
}

export interface ParsedAddress {
  /** The address without the house number token, trimmed and single-spaced ('' when nothing is left). */
  street: string;
  /** The last whitespace-separated token starting with a digit, or null when there is none. */
  houseNumber: string | null;
}

/**
 * decisions §6, signal 3: the house number is the last whitespace-separated token of `address` that starts with a
 * digit; the rest is the street (`Lindenweg 12` → Lindenweg / 12, `Am Markt 3a` → Am Markt / 3a,
 * `12 Main Street` → Main Street / 12; `Marktplatz` → Marktplatz / none). The token is kept verbatim (a trailing
 * comma disappears in its key).
 */
export function parseAddress(address: string): ParsedAddress {
  const tokens = address.trim().split(/\s+/u).filter(Boolean);
  let index = -1;
  for (let i = tokens.length - 1; i >= 0; i -= 1) {
    if (/^\p{Nd}/u.test(tokens[i])) {
      index = i;
      break;
    }
  }
  if (index === -1) return { street: tokens.join(' '), houseNumber: null };
  return {
    street: tokens.filter((_, i) => i !== index).join(' '),
    houseNumber: tokens[index],
  };
}
