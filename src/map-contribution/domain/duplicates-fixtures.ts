/** Fixtures shared by the duplicate-check specs (`duplicates*.spec.ts`); not part of the build. */
import {
  DEFAULT_DUPLICATE_RADIUS_METERS,
  evaluateDuplicates,
  type DuplicateLibrary,
  type DuplicateOptions,
} from './duplicates.js';
import type { ElementType, MapCandidate } from './types.js';

export const LIBRARY: DuplicateLibrary = {
  name: 'Bücherschrank am Park',
  address: 'Lindenweg 12',
  brand: '',
  operator: 'Bürgerverein Mitte',
  lat: 52.52,
  lng: 13.405,
};

export function options(overrides: Partial<DuplicateOptions> = {}): DuplicateOptions {
  return {
    radiusMeters: DEFAULT_DUPLICATE_RADIUS_METERS,
    linkedElements: new Set(),
    resolvedDifferent: new Set(),
    ...overrides,
  };
}

let nextId = 1000;
export function candidate(
  distanceMeters: number,
  tags: Record<string, string>,
  type: ElementType = 'node',
  id = (nextId += 1),
): MapCandidate {
  return { type, id, lat: 52.52, lon: 13.405, tags, distanceMeters };
}

export const bookcase = (distance: number, tags: Record<string, string> = {}, id?: number) =>
  candidate(distance, { amenity: 'public_bookcase', ...tags }, 'node', id);

export function signalsFor(
  candidates: MapCandidate[],
  opts: Partial<DuplicateOptions> = {},
  library: DuplicateLibrary = LIBRARY,
) {
  const result = evaluateDuplicates(library, candidates, options(opts));
  return { ...result, signals: result.candidates.map((c) => c.signals) };
}
