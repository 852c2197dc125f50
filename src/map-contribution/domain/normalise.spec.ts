import fc from 'fast-check';
import {
  comparisonKey,
  houseNumberKey,
  normaliseText,
  parseAddress,
  sameNormalised,
  streetKey,
} from './normalise.js';

const PUNCTUATION = [...'.,;:!?\'"-–—()[]{}/\\&*#@%+_«»„“”‚‘’·…'];
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
);

describe('normaliseText', () => {
  it.each([
    ['  Bücherschrank  am   Park ', 'bucherschrank am park'],
    ['BÜCHERSCHRANK', 'bucherschrank'],
    ['Lindenstraße', 'lindenstrasse'],
    ['LINDENSTRASSE', 'lindenstrasse'],
    ['St.-Georg-Platz', 'st georg platz'],
    ['„Troca-Troca!“', 'troca troca'],
    ['Ｆｕｌｌｗｉｄｔｈ', 'fullwidth'],
    ['Café\u00a0Olé', 'cafe ole'],
    ['ΟΔΟΣ', 'οδοσ'],
    ['οδος', 'οδοσ'],
    ['ẞ', 'ss'],
    ['🅐ς', 'σ'],
    ['Line\nbreak\tand tab', 'line break and tab'],
    ['', ''],
    ['...', ''],
  ])('%j → %j', (input, expected) => {
    expect(normaliseText(input)).toBe(expected);
  });

  it('is idempotent (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = normaliseText(text);
        expect(normaliseText(once)).toBe(once);
        expect(comparisonKey(once)).toBe(comparisonKey(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent and case-blind on every assigned-plane code point', () => {
    // planes 0–3 and the special-purpose plane 14; 4–13 are unassigned and 15–16 private use
    const failures: string[] = [];
    for (let cp = 0; cp <= 0xe0fff; cp += 1) {
      if ((cp >= 0xd800 && cp <= 0xdfff) || (cp > 0x3ffff && cp < 0xe0000)) continue;
      const text = String.fromCodePoint(cp);
      const once = normaliseText(text);
      const key = comparisonKey(text);
      if (normaliseText(once) !== once) failures.push(`idempotent U+${cp.toString(16)}`);
      if (comparisonKey(text.toUpperCase()) !== key || comparisonKey(text.toLowerCase()) !== key) {
        failures.push(`case U+${cp.toString(16)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('ignores case (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(comparisonKey(text.toUpperCase())).toBe(comparisonKey(text));
        expect(comparisonKey(text.toLowerCase())).toBe(comparisonKey(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('ignores punctuation and surrounding or repeated whitespace (property)', () => {
    const noisy = fc
      .array(
        fc.tuple(
          fc.string({
            unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzäöüß0123456789'),
            minLength: 1,
          }),
          fc.array(fc.constantFrom(...PUNCTUATION, ' ', '  ', '\t')),
        ),
        { minLength: 1, maxLength: 6 },
      )
      .map((parts) => ({
        clean: parts.map(([word]) => word).join(' '),
        noisy: parts.map(([word, noise]) => `${noise.join('')}${word}${noise.join('')}`).join(' '),
      }));
    fc.assert(
      fc.property(noisy, ({ clean, noisy: text }) => {
        expect(comparisonKey(text)).toBe(comparisonKey(clean));
      }),
    );
  });

  it('never leaves punctuation, symbols, leading, trailing or double spaces (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const out = normaliseText(text);
        expect(out).not.toMatch(/[\p{P}\p{S}\p{M}]/u);
        expect(out).not.toMatch(/^\s|\s$|\s\s|[^\S ]/u);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('sameNormalised', () => {
  it.each([
    ['Bücherschrank am Park', 'bücherschrank AM park', true],
    ['Bücherschrank am Park', 'Bucherschrank am Park', true],
    ['St. Georg', 'St-Georg', true],
    ['St. Georg', 'StGeorg', true],
    ['Bücherschrank am Park', 'Bücherschrank am Markt', false],
    ['', '', false],
    ['...', '!!!', false],
    ['Park', '', false],
    ['Park', null, false],
  ])('%j vs %j → %s', (a, b, expected) => {
    expect(sameNormalised(a, b)).toBe(expected);
  });
});

describe('streetKey and houseNumberKey', () => {
  it.each([
    ['Hauptstr.', 'Hauptstraße'],
    ['Haupt-Str.', 'Hauptstrasse'],
    ['Haupt Str', 'Hauptstraße'],
    ['Am Markt', 'am markt'],
    ['Rue de la Paix', 'rue de la paix'],
  ])('%j matches %j', (a, b) => {
    expect(streetKey(a)).toBe(streetKey(b));
  });

  it('does not merge different streets', () => {
    expect(streetKey('Lindenweg')).not.toBe(streetKey('Lindenstraße'));
  });

  it.each([
    ['3a', '3 A'],
    ['3a', '3A'],
    ['12,', '12'],
  ])('house number %j matches %j', (a, b) => {
    expect(houseNumberKey(a)).toBe(houseNumberKey(b));
  });
});

describe('parseAddress (decisions §6, signal 3)', () => {
  it.each([
    ['Lindenweg 12', 'Lindenweg', '12'],
    ['Am Markt 3a', 'Am Markt', '3a'],
    ['  Am   Markt   3a  ', 'Am Markt', '3a'],
    ['12 Main Street', 'Main Street', '12'],
    ['Straße des 17. Juni 5', 'Straße des 17. Juni', '5'],
    ['Straße des 17. Juni', 'Straße des Juni', '17.'],
    ['Lindenweg 12, 10115 Berlin', 'Lindenweg 12, Berlin', '10115'],
    ['Marktplatz', 'Marktplatz', null],
    ['12', '', '12'],
    ['', '', null],
    ['Hauptstraße 5-7', 'Hauptstraße', '5-7'],
  ])('%j → street %j, number %j', (address, street, houseNumber) => {
    expect(parseAddress(address)).toEqual({ street, houseNumber });
  });

  it('the number token starts with a digit and the two parts give back the tokens (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/\s/.test(s)),
          { maxLength: 6 },
        ),
        (words) => {
          const parsed = parseAddress(words.join(' '));
          if (parsed.houseNumber === null) {
            expect(words.some((w) => /^\p{Nd}/u.test(w))).toBe(false);
            expect(parsed.street).toBe(words.join(' '));
          } else {
            expect(parsed.houseNumber).toMatch(/^\p{Nd}/u);
            const index = words.lastIndexOf(parsed.houseNumber);
            expect(words.slice(index + 1).some((w) => /^\p{Nd}/u.test(w))).toBe(false);
            expect(parsed.street).toBe(words.filter((_, i) => i !== index).join(' '));
          }
        },
      ),
    );
  });
});
