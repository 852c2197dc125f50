import { houseNumberKey, parseAddress, sameNormalised, streetKey } from './normalise.js';
import type {
  CandidateSnapshot,
  DuplicateEvaluation,
  DuplicateSignal,
  ElementType,
  MapCandidate,
} from './types.js';

/** Signal 1's radius: fixed by the spec, not configurable. */
export const BOOKCASE_NEAR_METERS = 25;
/** MAPDB_DUPLICATE_RADIUS_METERS default (signals 2–4 and the query radius). */
export const DEFAULT_DUPLICATE_RADIUS_METERS = 100;

/** Public tags kept in the stored snapshot and the preview; anything else a query returns is dropped. */
export const SNAPSHOT_TAG_KEYS = [
  'amenity',
  'shop',
  'name',
  'brand',
  'operator',
  'addr:street',
  'addr:housenumber',
] as const;

/**
 * Signal 4's "compatible book-sharing tag": amenity=public_bookcase, amenity=give_box (give boxes often hold the
 * books) and amenity=library (little free libraries are sometimes mapped as one). shop=books is not: a shop sharing
 * a brand or operator is a shop, and stays a warning.
 */
export const BOOK_SHARING_AMENITIES = ['public_bookcase', 'give_box', 'library'] as const;

const SIGNAL_ORDER: readonly DuplicateSignal[] = [
  'bookcase_within_25m',
  'bookcase_same_name',
  'bookcase_same_address',
  'brand_or_operator_match',
  'element_already_linked',
];

const TYPE_ORDER: Record<ElementType, number> = { node: 0, way: 1, relation: 2 };

export interface DuplicateLibrary {
  name: string;
  address: string;
  brand: string;
  operator: string;
  lat: number;
  lng: number;
}

export interface DuplicateOptions {
  /** MAPDB_DUPLICATE_RADIUS_METERS: signals 2–4 and the horizon beyond which candidates are ignored. */
  radiusMeters: number;
  /** `type/id` keys of elements already linked to another library (signal 5). */
  linkedElements: ReadonlySet<string>;
  /** `type/id` keys staff resolved as a different feature for this library: listed and warned, never blocking. */
  resolvedDifferent: ReadonlySet<string>;
}

/** A candidate the query adapter should have rejected (its answer is malformed, so the check failed). */
export class MalformedCandidateError extends Error {
  readonly code = 'malformed_candidate';

  constructor(detail: string) {
    super(`Malformed duplicate-check candidate: ${detail}`);
    this.name = 'MalformedCandidateError';
  }
}

export function elementKey(type: ElementType, id: number): string {
  return `${type}/${id}`;
}

/**
 * How far the query must look: the configured radius, but never less than signal 1's fixed 25 m, so lowering
 * MAPDB_DUPLICATE_RADIUS_METERS can never switch signal 1 off.
 */
export function queryRadiusMeters(radiusMeters: number): number {
  return Math.max(radiusMeters, BOOKCASE_NEAR_METERS);
}

type Point = { lat: number; lng: number } | { lat: number; lon: number };

const EARTH_RADIUS_METERS = 6_371_008.8;

/** Great-circle distance in metres (mean Earth radius); accepts `lng` (library) or `lon` (map) points. */
export function haversineMeters(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const lngA = 'lng' in a ? a.lng : a.lon;
  const lngB = 'lng' in b ? b.lng : b.lon;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (lngB - lngA) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_METERS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** `amenity=a;b` lists count for each value. */
function tagValues(tags: Record<string, string>, key: string): string[] {
  const value = Object.hasOwn(tags, key) ? tags[key] : undefined;
  if (typeof value !== 'string') return [];
  return value
    .split(';')
    .map((part) => part.trim().toLowerCase())
    .filter(Boolean);
}

function hasTag(tags: Record<string, string>, key: string, value: string): boolean {
  return tagValues(tags, key).includes(value);
}

function tag(tags: Record<string, string>, key: string): string {
  const value = Object.hasOwn(tags, key) ? tags[key] : undefined;
  return typeof value === 'string' ? value : '';
}

function validate(candidate: MapCandidate): void {
  const key = `${String(candidate.type)}/${String(candidate.id)}`;
  if (!Object.hasOwn(TYPE_ORDER, candidate.type))
    throw new MalformedCandidateError(`type of ${key}`);
  if (!Number.isSafeInteger(candidate.id) || candidate.id <= 0) {
    throw new MalformedCandidateError(`id of ${key}`);
  }
  if (!Number.isFinite(candidate.distanceMeters) || candidate.distanceMeters < 0) {
    throw new MalformedCandidateError(`distance of ${key}`);
  }
  if (candidate.tags === null || typeof candidate.tags !== 'object') {
    throw new MalformedCandidateError(`tags of ${key}`);
  }
}

function snapshotTags(tags: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const key of SNAPSHOT_TAG_KEYS) {
    const value = tag(tags, key);
    if (value !== '') kept[key] = value;
  }
  return kept;
}

function signalsOf(
  library: DuplicateLibrary,
  candidate: MapCandidate,
  options: DuplicateOptions,
): DuplicateSignal[] {
  const { tags, distanceMeters: distance } = candidate;
  const withinRadius = distance <= options.radiusMeters;
  const bookcase = hasTag(tags, 'amenity', 'public_bookcase');
  const signals = new Set<DuplicateSignal>();

  if (bookcase && distance <= BOOKCASE_NEAR_METERS) signals.add('bookcase_within_25m');

  if (bookcase && withinRadius && sameNormalised(library.name, tag(tags, 'name'))) {
    signals.add('bookcase_same_name');
  }

  if (bookcase && withinRadius && sameAddress(library.address, tags)) {
    signals.add('bookcase_same_address');
  }

  const bookSharing = BOOK_SHARING_AMENITIES.some((amenity) => hasTag(tags, 'amenity', amenity));
  if (bookSharing && withinRadius) {
    const ours = [library.brand, library.operator];
    const theirs = [tag(tags, 'brand'), tag(tags, 'operator')];
    if (ours.some((mine) => theirs.some((other) => sameNormalised(mine, other)))) {
      signals.add('brand_or_operator_match');
    }
  }

  if (options.linkedElements.has(elementKey(candidate.type, candidate.id))) {
    signals.add('element_already_linked');
  }

  return SIGNAL_ORDER.filter((signal) => signals.has(signal));
}

/**
 * Signal 3 needs a street and a house number on both sides. `addr:housenumber` lists (`12;14`) match on any entry.
 */
function sameAddress(address: string, tags: Record<string, string>): boolean {
  const ours = parseAddress(address);
  const ourStreet = streetKey(ours.street);
  const ourNumber = houseNumberKey(ours.houseNumber ?? '');
  const theirStreet = streetKey(tag(tags, 'addr:street'));
  if (!ourStreet || !ourNumber || !theirStreet || ourStreet !== theirStreet) return false;
  return tag(tags, 'addr:housenumber')
    .split(/[;,]/)
    .map(houseNumberKey)
    .some((number) => number !== '' && number === ourNumber);
}

function describe(candidate: MapCandidate): string {
  const name = tag(candidate.tags, 'name').trim();
  const label = `${elementKey(candidate.type, candidate.id)}${name ? ` "${name}"` : ''}`;
  return `${label} at ${Math.round(candidate.distanceMeters)} m`;
}

function warningFor(
  candidate: MapCandidate,
  signals: DuplicateSignal[],
  resolved: boolean,
): string {
  const { tags } = candidate;
  if (resolved) {
    const listed = signals.length ? ` (signals: ${signals.join(', ')})` : '';
    return `Resolved by staff as a different feature: ${describe(candidate)}${listed}.`;
  }
  if (hasTag(tags, 'amenity', 'public_bookcase')) {
    return `Public bookcase nearby without a matching name or address: ${describe(candidate)}. Missing tags never prove it is a different bookcase; inspect the map.`;
  }
  if (hasTag(tags, 'amenity', 'library')) {
    return `Library nearby: ${describe(candidate)}. Check that it is not the same place.`;
  }
  if (hasTag(tags, 'amenity', 'give_box')) {
    return `Give box nearby: ${describe(candidate)}. Check that it is not the same place.`;
  }
  if (hasTag(tags, 'shop', 'books')) {
    return `Book shop nearby: ${describe(candidate)}. Check that it is not the same place.`;
  }
  return `Other map feature nearby: ${describe(candidate)}.`;
}

function byDistanceThenElement(a: MapCandidate, b: MapCandidate): number {
  return (
    a.distanceMeters - b.distanceMeters || TYPE_ORDER[a.type] - TYPE_ORDER[b.type] || a.id - b.id
  );
}

/**
 * The five blocking signals of api-spec "Duplicate detection" over candidates whose distance the adapter computed
 * (to the node, or to a way's or relation's representative point). Distances are inclusive (25 m and the radius
 * block; beyond them do not). Candidates beyond `queryRadiusMeters(radius)` are ignored entirely. Each kept
 * candidate is snapshotted with allowlisted tags and its signals, ordered by distance, then node/way/relation, then
 * id; a repeated element is taken once. A candidate staff resolved as a different feature keeps its signals in the
 * snapshot but does not block and becomes a warning; every other non-blocking candidate is a warning too.
 * Throws MalformedCandidateError for a candidate with a bad type, id, distance or tags (the check has failed).
 */
export function evaluateDuplicates(
  library: DuplicateLibrary,
  candidates: readonly MapCandidate[],
  options: DuplicateOptions,
): DuplicateEvaluation {
  if (!Number.isFinite(options.radiusMeters) || options.radiusMeters <= 0) {
    throw new RangeError('radiusMeters must be a positive number');
  }
  candidates.forEach(validate);
  const horizon = queryRadiusMeters(options.radiusMeters);
  const seen = new Set<string>();
  const kept = candidates
    .filter((candidate) => candidate.distanceMeters <= horizon)
    .sort(byDistanceThenElement)
    .filter((candidate) => {
      const key = elementKey(candidate.type, candidate.id);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });

  let blocking = false;
  const warnings: string[] = [];
  const snapshots = kept.map((candidate): CandidateSnapshot => {
    const signals = signalsOf(library, candidate, options);
    const resolved = options.resolvedDifferent.has(elementKey(candidate.type, candidate.id));
    if (signals.length > 0 && !resolved) blocking = true;
    else warnings.push(warningFor(candidate, signals, resolved));
    return {
      type: candidate.type,
      id: candidate.id,
      distance_m: Math.round(candidate.distanceMeters * 10) / 10,
      tags: snapshotTags(candidate.tags),
      signals,
      ...(resolved ? { resolved_different: true as const } : {}),
    };
  });

  return { blocking, candidates: snapshots, warnings };
}
