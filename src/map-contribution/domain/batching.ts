import { haversineMeters } from './duplicates.js';
import { comparisonKey } from './normalise.js';
import type { BatchCandidate, ConfirmBatch } from './types.js';

export interface BatchLimits {
  /** Largest distance between any two libraries of one batch. */
  maxSpanMeters: number;
  /** Most libraries in one batch (one changeset). */
  maxSize: number;
}

export const DEFAULT_BATCH_LIMITS: Readonly<BatchLimits> = Object.freeze({
  maxSpanMeters: 2000,
  maxSize: 10,
});

function areaKey(candidate: BatchCandidate): string | null {
  const country = candidate.country.trim().toUpperCase();
  const city = comparisonKey(candidate.city);
  if (country === '' || city === '') return null;
  return `${country}\u0000${city}`;
}

function validPoint(candidate: BatchCandidate): boolean {
  return (
    Number.isFinite(candidate.lat) &&
    Number.isFinite(candidate.lng) &&
    Math.abs(candidate.lat) <= 90 &&
    Math.abs(candidate.lng) <= 180
  );
}

const bySlug = (a: BatchCandidate, b: BatchCandidate) =>
  a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0;

/**
 * Groups a batch confirm's libraries into one changeset each: the same country (case-insensitive) and city
 * (`comparisonKey`: case, accents, punctuation and spacing ignored), every pair within `maxSpanMeters` of each other
 * (the batch's diameter, not its distance to a centre), at most `maxSize` libraries. A library without city or
 * country, or with an invalid position, goes alone. A repeated slug is taken once (its first occurrence). Otherwise
 * the result does not depend on the input order: within an area the smallest unassigned slug seeds a batch, which then takes the nearest remaining libraries
 * (ties by slug) that keep the span. Batches come out by country, city, then first slug; items by slug.
 */
export function planBatches(
  candidates: readonly BatchCandidate[],
  limits: BatchLimits = DEFAULT_BATCH_LIMITS,
): ConfirmBatch[] {
  if (!Number.isFinite(limits.maxSpanMeters) || limits.maxSpanMeters < 0) {
    throw new RangeError('maxSpanMeters must be a non-negative number');
  }
  if (!Number.isSafeInteger(limits.maxSize) || limits.maxSize < 1) {
    throw new RangeError('maxSize must be a positive whole number');
  }

  const unique = new Map<string, BatchCandidate>();
  for (const candidate of [...candidates].sort(bySlug)) {
    if (!unique.has(candidate.slug)) unique.set(candidate.slug, candidate);
  }

  const areas = new Map<string, BatchCandidate[]>();
  const batches: ConfirmBatch[] = [];
  const single = (candidate: BatchCandidate): ConfirmBatch => ({
    city: candidate.city,
    country: candidate.country,
    items: [candidate],
  });

  for (const candidate of unique.values()) {
    const key = areaKey(candidate);
    if (key === null || !validPoint(candidate)) batches.push(single(candidate));
    else areas.set(key, [...(areas.get(key) ?? []), candidate]);
  }

  for (const members of areas.values()) {
    const remaining = [...members];
    while (remaining.length > 0) {
      const seed = remaining.shift()!;
      const batch = [seed];
      const byDistance = remaining
        .map((candidate) => ({ candidate, distance: haversineMeters(seed, candidate) }))
        .sort((a, b) => a.distance - b.distance || bySlug(a.candidate, b.candidate));
      for (const { candidate } of byDistance) {
        if (batch.length >= limits.maxSize) break;
        if (batch.every((member) => haversineMeters(member, candidate) <= limits.maxSpanMeters)) {
          batch.push(candidate);
          remaining.splice(remaining.indexOf(candidate), 1);
        }
      }
      batches.push({ city: seed.city, country: seed.country, items: batch.sort(bySlug) });
    }
  }

  return batches.sort(
    (a, b) =>
      compare(a.country.trim().toUpperCase(), b.country.trim().toUpperCase()) ||
      compare(comparisonKey(a.city), comparisonKey(b.city)) ||
      bySlug(a.items[0], b.items[0]),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
