import slugifyModule from 'slugify';

const slugify = slugifyModule as unknown as (
  text: string,
  options: Record<string, unknown>,
) => string;

/** Words that are routes of their own under /libraries/ and so can never be a slug. */
export const RESERVED_SLUGS = new Set([
  'latest',
  'countries',
  'favourites',
  'mine',
  'moderation',
  'audit',
  'map',
  'tiles',
  'export',
]);
const MAX_BASE_LENGTH = 200;

/**
 * `slugify("{city} {address} {name}")`, ASCII-folded, lower case, words joined by `-`; the name is left out when
 * blank. Never empty and never a reserved word. Uniqueness (`-2`, `-3`…) is the repository's job.
 */
export function baseSlug(parts: { city: string; address?: string; name?: string }): string {
  const text = [parts.city, parts.address ?? '', parts.name ?? '']
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ');
  let slug = slugify(text, { lower: true, strict: true, trim: true })
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
  if (slug.length > MAX_BASE_LENGTH)
    slug = slug.slice(0, MAX_BASE_LENGTH).replace(/-[^-]*$/, '') || slug.slice(0, MAX_BASE_LENGTH);
  if (!slug) slug = 'library';
  if (RESERVED_SLUGS.has(slug)) slug = `${slug}-library`;
  return slug;
}

/** The n-th candidate for a base: `base`, `base-2`, `base-3`, … */
export function slugCandidate(base: string, attempt: number): string {
  return attempt <= 1 ? base : `${base}-${attempt}`;
}
