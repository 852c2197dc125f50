import { haversineMeters } from '../domain/duplicates.js';
import type { ElementType, MapCandidate, Tags } from '../domain/types.js';
import {
  decodeUtf8,
  discardBody,
  isLatitude,
  isLongitude,
  isPositiveId,
  readBodyLimited,
  realSleep,
  ResponseTooLargeError,
  retryAfterMs,
} from './outbound-http.js';

/**
 * Why a duplicate query failed, as a stable category that is safe to store and log (never a body, never a URL with
 * credentials). Every one of them blocks the write: a failed check never proves the absence of a duplicate.
 * - `timeout`: an attempt exceeded its time budget;
 * - `rate_limited`: 429 on the last attempt, or a Retry-After longer than the client is willing to wait;
 * - `http_<status>`: any other non-2xx answer (5xx only after the last attempt);
 * - `malformed_response`: not JSON, not the Overpass shape, an element without a usable position, or too large;
 * - `incomplete_response`: the interpreter reported a runtime error (its results may be partial);
 * - `network_error`: no HTTP answer (refused, reset, DNS…).
 */
export type MapQueryErrorCode =
  | 'timeout'
  | 'rate_limited'
  | `http_${number}`
  | 'malformed_response'
  | 'incomplete_response'
  | 'network_error';

export class MapQueryError extends Error {
  constructor(
    readonly code: MapQueryErrorCode,
    /** HTTP attempts made before giving up. */
    readonly attempts: number,
  ) {
    super(`map query failed (${code}) after ${attempts} attempt${attempts === 1 ? '' : 's'}`);
    this.name = 'MapQueryError';
  }
}

export interface MapQueryClientOptions {
  /** MAPDB_QUERY_URL: the Overpass-style interpreter endpoint (…/api/interpreter). */
  url: string;
  /** MAPDB_USER_AGENT: application/version plus a monitored contact URL. */
  userAgent: string;
  /** Budget of one attempt: connect, answer and body together. Default 10 s. */
  timeoutMs?: number;
  /** Attempts in total, 1–3 (the spec's ceiling for read-only retries). Default 3. */
  maxAttempts?: number;
  /** First backoff; doubled per retry and capped by `backoffMaxMs`. Defaults 500 ms and 4 s. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** The longest Retry-After honoured; a longer one fails the check at once as `rate_limited`. Default 30 s. */
  maxRetryAfterMs?: number;
  /** Larger answers are refused as `malformed_response`. Default 5 MB. */
  maxResponseBytes?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Features asked for besides any `brand`/`operator` carrier (duplicate signal 4 needs those). */
export const QUERIED_FEATURES: readonly [key: string, value: string][] = [
  ['amenity', 'public_bookcase'],
  ['amenity', 'library'],
  ['amenity', 'give_box'],
  ['shop', 'books'],
];

const MAX_ATTEMPTS = 3;
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);
const ELEMENT_TYPES: readonly string[] = ['node', 'way', 'relation'] satisfies ElementType[];

/** Coordinates as sent in the query: seven decimals, the map database's own precision. */
function coordinate(value: number): string {
  return value.toFixed(7);
}

/** The Overpass QL text of a nearby-features query (exported for the record and for tests). */
export function buildNearbyQuery(
  lat: number,
  lng: number,
  radiusMeters: number,
  serverTimeoutSeconds: number,
): string {
  const around = `(around:${radiusMeters},${coordinate(lat)},${coordinate(lng)})`;
  const filters = [
    ...QUERIED_FEATURES.map(([key, value]) => `["${key}"="${value}"]`),
    '["brand"]',
    '["operator"]',
  ];
  return [
    `[out:json][timeout:${serverTimeoutSeconds}];`,
    '(',
    ...filters.map((filter) => `  nwr${around}${filter};`),
    ');',
    'out center tags;',
  ].join('\n');
}

type Attempt = { ok: true; candidates: MapCandidate[] } | { ok: false; failure: Failure };

interface Failure {
  code: MapQueryErrorCode;
  retryable: boolean;
  /** Retry-After of the answer, in ms, when it sent one. */
  retryAfterMs: number | null;
}

/**
 * Read-only client of an Overpass-style interpreter. One `findNear` makes at most three attempts, waiting a bounded
 * exponential backoff (or the server's Retry-After, up to a ceiling) between them. It never sends the map API token.
 */
export class MapQueryClient {
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly maxResponseBytes: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(private readonly options: MapQueryClientOptions) {
    if (!options.url) throw new Error('MapQueryClient needs the query URL');
    if (!options.userAgent.trim()) throw new Error('MapQueryClient needs a User-Agent');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = Math.min(MAX_ATTEMPTS, Math.max(1, Math.floor(options.maxAttempts ?? 3)));
    this.backoffBaseMs = options.backoffBaseMs ?? 500;
    this.backoffMaxMs = options.backoffMaxMs ?? 4_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 5_000_000;
    this.sleep = options.sleep ?? realSleep;
    this.now = options.now ?? Date.now;
  }

  /**
   * Nodes, ways and relations within `radiusMeters` of the point that are bookcases, libraries, give boxes or book
   * shops, or carry a brand or operator; nearest first. A way's or relation's distance is to its center, which can
   * lie beyond the radius when only part of the feature is within it.
   */
  async findNear(lat: number, lng: number, radiusMeters: number): Promise<MapCandidate[]> {
    if (!isLatitude(lat) || !isLongitude(lng)) throw new RangeError('invalid coordinate');
    if (!Number.isFinite(radiusMeters) || radiusMeters <= 0 || radiusMeters > 10_000) {
      throw new RangeError('radius must be within (0, 10000] metres');
    }
    const query = buildNearbyQuery(
      lat,
      lng,
      Math.ceil(radiusMeters),
      Math.max(1, Math.ceil(this.timeoutMs / 1000)),
    );

    for (let attempt = 1; ; attempt++) {
      const result = await this.attempt(query, lat, lng);
      if (result.ok) return result.candidates;
      const { failure } = result;
      if (!failure.retryable || attempt >= this.maxAttempts) {
        throw new MapQueryError(failure.code, attempt);
      }
      const backoff = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** (attempt - 1));
      if (failure.retryAfterMs !== null && failure.retryAfterMs > this.maxRetryAfterMs) {
        throw new MapQueryError(failure.code, attempt);
      }
      await this.sleep(failure.retryAfterMs ?? backoff);
    }
  }

  private async attempt(query: string, lat: number, lng: number): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    try {
      response = await fetch(this.options.url, {
        method: 'POST',
        headers: {
          'User-Agent': this.options.userAgent,
          'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8',
          Accept: 'application/json',
        },
        body: new URLSearchParams({ data: query }).toString(),
        signal: timeout,
        redirect: 'manual',
      });
    } catch {
      return fail(timeout.aborted ? 'timeout' : 'network_error', true);
    }
    if (response.status < 200 || response.status > 299) {
      discardBody(response);
      const status = response.status;
      return fail(
        status === 429 ? 'rate_limited' : `http_${status}`,
        RETRYABLE_STATUSES.has(status),
        retryAfterMs(response.headers.get('retry-after'), this.now()),
      );
    }
    let bytes: Buffer;
    try {
      bytes = await readBodyLimited(response, this.maxResponseBytes);
    } catch (error) {
      if (error instanceof ResponseTooLargeError) return fail('malformed_response', false);
      return fail(timeout.aborted ? 'timeout' : 'network_error', true);
    }
    const text = decodeUtf8(bytes);
    if (text === null) return fail('malformed_response', false);

    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return fail('malformed_response', false);
    }
    if (!isRecord(payload) || !Array.isArray(payload.elements)) {
      return fail('malformed_response', false);
    }
    if (typeof payload.remark === 'string' && /runtime error/i.test(payload.remark)) {
      return fail('incomplete_response', true);
    }
    const candidates = parseElements(payload.elements, lat, lng);
    return candidates ? { ok: true, candidates } : fail('malformed_response', false);
  }
}

function fail(code: MapQueryErrorCode, retryable: boolean, retryAfter: number | null = null) {
  return { ok: false, failure: { code, retryable, retryAfterMs: retryAfter } } as const;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Strictly reads Overpass `out center tags` elements; null when any element is unusable. */
function parseElements(elements: unknown[], lat: number, lng: number): MapCandidate[] | null {
  const byKey = new Map<string, MapCandidate>();
  for (const element of elements) {
    if (!isRecord(element)) return null;
    const { type, id } = element;
    if (typeof type !== 'string' || !ELEMENT_TYPES.includes(type) || !isPositiveId(id)) return null;
    const position = type === 'node' ? element : element.center;
    if (!isRecord(position)) return null;
    const { lat: elementLat, lon: elementLon } = position;
    if (typeof elementLat !== 'number' || typeof elementLon !== 'number') return null;
    if (!isLatitude(elementLat) || !isLongitude(elementLon)) return null;
    const tags = readTags(element.tags);
    if (!tags) return null;
    byKey.set(`${type}/${id}`, {
      type: type as ElementType,
      id,
      lat: elementLat,
      lon: elementLon,
      tags,
      distanceMeters: haversineMeters({ lat, lng }, { lat: elementLat, lon: elementLon }),
    });
  }
  return [...byKey.values()].sort(
    (a, b) =>
      a.distanceMeters - b.distanceMeters ||
      ELEMENT_TYPES.indexOf(a.type) - ELEMENT_TYPES.indexOf(b.type) ||
      a.id - b.id,
  );
}

function readTags(value: unknown): Tags | null {
  if (value === undefined) return {};
  if (!isRecord(value)) return null;
  const entries = Object.entries(value);
  if (!entries.every(([, tagValue]) => typeof tagValue === 'string')) return null;
  // fromEntries keeps a `__proto__` key an own property instead of setting the prototype.
  return Object.fromEntries(entries) as Tags;
}
