import { dictionary } from '@zxcvbn-ts/language-common';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;
/** Django's UserAttributeSimilarityValidator default. */
export const MAX_SIMILARITY = 0.7;

export const PASSWORD_MESSAGES = {
  tooShort: `This password is too short. It must contain at least ${PASSWORD_MIN_LENGTH} characters.`,
  tooLong: `This password is too long. It must contain at most ${PASSWORD_MAX_LENGTH} characters.`,
  similarToUsername: 'The password is too similar to the username.',
  similarToEmail: 'The password is too similar to the email.',
  tooCommon: 'This password is too common.',
  entirelyNumeric: 'This password is entirely numeric.',
} as const;

export interface PasswordContext {
  username?: string | null;
  email?: string | null;
}

/** The zxcvbn-ts common list (≈49,000 leaked passwords, lower-case), as a set. */
let commonPasswords: Set<string> | null = null;
function isCommon(password: string): boolean {
  commonPasswords ??= new Set(dictionary['passwords-common']);
  return commonPasswords.has(password.trim().toLowerCase());
}

/** Code points, as Python's len() and indexing see a string. */
function chars(text: string): string[] {
  return Array.from(text);
}

/**
 * difflib.SequenceMatcher(a, b).quick_ratio(): 2·M / (|a| + |b|) where M counts the characters the two strings
 * share as multisets. It bounds ratio() from above, and it is what Django's similarity validator compares.
 */
export function quickRatio(a: string, b: string): number {
  const left = chars(a);
  const right = chars(b);
  const total = left.length + right.length;
  if (total === 0) return 1;
  const available = new Map<string, number>();
  for (const char of right) available.set(char, (available.get(char) ?? 0) + 1);
  let matches = 0;
  for (const char of left) {
    const count = available.get(char) ?? 0;
    if (count > 0) {
      available.set(char, count - 1);
      matches += 1;
    }
  }
  return (2 * matches) / total;
}

/** A short attribute part is not compared with a much longer password (Django's exceeds_maximum_length_ratio). */
function exceedsMaximumLengthRatio(password: string, value: string): boolean {
  const passwordLength = chars(password).length;
  const valueLength = chars(value).length;
  return passwordLength >= 10 * valueLength && valueLength < (MAX_SIMILARITY / 2) * passwordLength;
}

/**
 * Django's UserAttributeSimilarityValidator: the password (lower-cased) against the attribute and each of its
 * parts split on non-word characters, similar when quick_ratio ≥ 0.7.
 */
export function isTooSimilar(password: string, attribute: string | null | undefined): boolean {
  if (!attribute) return false;
  const candidate = password.toLowerCase();
  const value = attribute.toLowerCase();
  const parts = [...value.split(/[^\p{L}\p{N}_]+/u), value];
  return parts.some(
    (part) =>
      !exceedsMaximumLengthRatio(candidate, part) && quickRatio(candidate, part) >= MAX_SIMILARITY,
  );
}

/**
 * The password rules of registration and password change, in order; returns the first failing rule's message,
 * or null when the password is acceptable.
 */
export function checkPasswordPolicy(
  password: string,
  context: PasswordContext = {},
): string | null {
  const length = chars(password).length;
  if (length < PASSWORD_MIN_LENGTH) return PASSWORD_MESSAGES.tooShort;
  if (length > PASSWORD_MAX_LENGTH) return PASSWORD_MESSAGES.tooLong;
  if (isTooSimilar(password, context.username)) return PASSWORD_MESSAGES.similarToUsername;
  if (isTooSimilar(password, context.email)) return PASSWORD_MESSAGES.similarToEmail;
  if (isCommon(password)) return PASSWORD_MESSAGES.tooCommon;
  if (/^\p{Nd}+$/u.test(password)) return PASSWORD_MESSAGES.entirelyNumeric;
  return null;
}
