import { dictionary } from '@zxcvbn-ts/language-common';
import {
  checkPasswordPolicy,
  isTooSimilar,
  PASSWORD_MESSAGES,
  quickRatio,
} from './password-policy.js';

describe('password policy', () => {
  const context = { username: 'reader_anna', email: 'anna.berg@example.org' };

  it('accepts a good password', () => {
    expect(checkPasswordPolicy('Quiet-Lantern-7319', context)).toBeNull();
    expect(checkPasswordPolicy('Quiet-Lantern-7319')).toBeNull();
  });

  describe('length 8–128', () => {
    it.each([[''], ['a'], ['Ab3$xyz']])('refuses %j as too short', (password) => {
      expect(checkPasswordPolicy(password, context)).toBe(PASSWORD_MESSAGES.tooShort);
    });

    it('uses the exact short message', () => {
      expect(PASSWORD_MESSAGES.tooShort).toBe(
        'This password is too short. It must contain at least 8 characters.',
      );
      expect(PASSWORD_MESSAGES.tooLong).toBe(
        'This password is too long. It must contain at most 128 characters.',
      );
    });

    it('accepts exactly 8 and exactly 128 characters', () => {
      expect(checkPasswordPolicy('Zq7!vWp2', context)).toBeNull();
      const long = 'Zq7!vWp2'.repeat(16);
      expect(long).toHaveLength(128);
      expect(checkPasswordPolicy(long, context)).toBeNull();
    });

    it('refuses 129 characters as too long', () => {
      expect(checkPasswordPolicy('Zq7!vWp2'.repeat(16) + 'x', context)).toBe(
        PASSWORD_MESSAGES.tooLong,
      );
    });

    it('counts code points, not UTF-16 units', () => {
      expect(checkPasswordPolicy('😀😀😀😀😀😀😀', context)).toBe(PASSWORD_MESSAGES.tooShort);
      expect(checkPasswordPolicy('😀😀😀😀😀😀😀x', context)).toBeNull();
    });
  });

  describe('similarity to the username and email', () => {
    it('matches difflib quick_ratio', () => {
      // Values computed with Python's difflib.SequenceMatcher(a=…, b=…).quick_ratio().
      const cases: [string, string, number][] = [
        ['', '', 1],
        ['abc', 'abc', 1],
        ['abcd', 'dcba', 1],
        ['password', 'pass', 0.6666666666666666],
        ['hello world', 'world', 0.625],
        ['añb', 'bña', 1],
        ['aaab', 'ab', 0.6666666666666666],
        ['xyz', 'abc', 0],
        ['emilie.dupont', 'dupont', 0.631578947368421],
        ['😀ab', 'a😀', 0.8],
      ];
      for (const [a, b, expected] of cases)
        expect([a, b, quickRatio(a, b)]).toEqual([a, b, expected]);
    });

    it('refuses a password too similar to the username, case-insensitively', () => {
      expect(checkPasswordPolicy('Reader_Anna1', context)).toBe(
        PASSWORD_MESSAGES.similarToUsername,
      );
      expect(checkPasswordPolicy('READERANNA', context)).toBe(PASSWORD_MESSAGES.similarToUsername);
    });

    it('compares with each part of the attribute split on non-word characters', () => {
      // "anna" and "berg" are parts of the email; "example" is one too.
      expect(checkPasswordPolicy('example99', context)).toBe(PASSWORD_MESSAGES.similarToEmail);
      expect(checkPasswordPolicy('anna.berg@example', context)).toBe(
        PASSWORD_MESSAGES.similarToEmail,
      );
    });

    it('checks the username before the email', () => {
      expect(
        checkPasswordPolicy('samesame1', { username: 'samesame', email: 'samesame@example.org' }),
      ).toBe(PASSWORD_MESSAGES.similarToUsername);
    });

    it('skips a short part when the password is ten times longer', () => {
      expect(isTooSimilar('a'.repeat(40), 'aa')).toBe(false);
      expect(isTooSimilar('aaaaaaaa', 'aaaaaa')).toBe(true);
    });

    it('ignores missing attributes', () => {
      expect(isTooSimilar('anything-at-all', '')).toBe(false);
      expect(isTooSimilar('anything-at-all', null)).toBe(false);
      expect(
        checkPasswordPolicy('Quiet-Lantern-7319', { username: null, email: undefined }),
      ).toBeNull();
    });
  });

  describe('common passwords', () => {
    it('loads a maintained list of at least 10,000 entries', () => {
      expect(dictionary['passwords-common'].length).toBeGreaterThanOrEqual(10_000);
    });

    it.each([['password'], ['iloveyou'], ['qwertyuiop'], ['Password1'], ['  PASSWORD  ']])(
      'refuses %j',
      (password) => {
        expect(checkPasswordPolicy(password, context)).toBe(PASSWORD_MESSAGES.tooCommon);
      },
    );

    it('checks the list before the numeric rule', () => {
      expect(checkPasswordPolicy('12345678', context)).toBe(PASSWORD_MESSAGES.tooCommon);
    });
  });

  describe('entirely numeric', () => {
    it('refuses a numeric password that is not on the common list', () => {
      expect(checkPasswordPolicy('80417263951', context)).toBe(PASSWORD_MESSAGES.entirelyNumeric);
    });

    it('accepts digits with a letter', () => {
      expect(checkPasswordPolicy('80417263951x', context)).toBeNull();
    });
  });

  it('returns the first failing rule only', () => {
    // Short, numeric and common at once: length comes first.
    expect(checkPasswordPolicy('1234', context)).toBe(PASSWORD_MESSAGES.tooShort);
    // Similar and common: similarity comes first.
    expect(checkPasswordPolicy('password', { username: 'password' })).toBe(
      PASSWORD_MESSAGES.similarToUsername,
    );
  });
});
