export const USERNAME_MIN_LENGTH = 3;
export const USERNAME_MAX_LENGTH = 150;

/** Lower-case letters and digits (accents folded), words joined by dots: "José María" → "jose.maria". */
export function usernameSlug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[\s.]+/gu, '.')
    .replace(/[^\p{L}\p{N}._-]+/gu, '')
    .replace(/\.{2,}/g, '.')
    .replace(/^[._-]+|[._-]+$/g, '');
}

export interface UsernameSource {
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  provider: string;
}

/**
 * The base of a new social account's username: the names, else the email's local part (without a `+tag`), else
 * `<provider>user`; the first that gives at least 3 characters, cut so a numeric suffix still fits in 150.
 */
export function usernameBase(source: UsernameSource, room = 8): string {
  const names = [source.firstName ?? '', source.lastName ?? ''].join(' ');
  const local = (source.email ?? '').split('@')[0].split('+')[0];
  for (const candidate of [names, local, `${source.provider}user`]) {
    const slug = Array.from(usernameSlug(candidate))
      .slice(0, USERNAME_MAX_LENGTH - room)
      .join('')
      .replace(/[._-]+$/g, '');
    if (Array.from(slug).length >= USERNAME_MIN_LENGTH) return slug;
  }
  return `${source.provider}user`;
}

/** `base`, then `base2`, `base3`, … (`count` candidates), each at most 150 characters. */
export function usernameCandidates(base: string, count: number, start = 1): string[] {
  return Array.from({ length: count }, (_, index) => withSuffix(base, start + index));
}

export function withSuffix(base: string, n: number): string {
  if (n <= 1) return base;
  const suffix = String(n);
  return (
    Array.from(base)
      .slice(0, USERNAME_MAX_LENGTH - suffix.length)
      .join('') + suffix
  );
}
