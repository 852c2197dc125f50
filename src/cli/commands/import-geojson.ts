import { readFile } from 'node:fs/promises';
import type { INestApplicationContext } from '@nestjs/common';
import { Clock } from '../../common/clock.js';
import { Database } from '../../database/database.js';
import type { Wheelchair } from '../../libraries/library.entity.js';
import { UsageError, type CliCommand } from '../cli-command.js';
import { LibraryBulkWriter, type BulkLibrary, type NearbyLibrary } from './library-bulk-writer.js';

export type SkipReason =
  | 'invalid geometry'
  | 'no city or country'
  | 'invalid country'
  | 'duplicate external_id'
  | 'duplicate name and position';

const DUPLICATE_REASONS: SkipReason[] = ['duplicate external_id', 'duplicate name and position'];

/** A feature without an id is the same bookcase as a library this close with the same name (and address). */
export const SAME_PLACE_METERS = 10;

/** A feature's library, minus what the import run decides (source, status, provenance, time). */
export type ImportedFields = Omit<
  BulkLibrary,
  'source' | 'status' | 'submissionOrigin' | 'createdAt'
>;

const BATCH_SIZE = 1000;

const LIMITS = {
  name: 255,
  address: 255,
  city: 100,
  postalCode: 20,
  website: 500,
  operator: 255,
  brand: 255,
  externalId: 255,
  source: 100,
} as const;

function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? chars.slice(0, max).join('').trimEnd() : text;
}

/** A tag's value as trimmed text; numbers (house numbers, postcodes, ids) count as text, anything else as ''. */
function text(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

function yesNo(value: unknown): boolean | null {
  const tag = text(value).toLowerCase();
  return tag === 'yes' ? true : tag === 'no' ? false : null;
}

function wheelchair(value: unknown): Wheelchair {
  const tag = text(value).toLowerCase();
  return tag === 'yes' || tag === 'no' || tag === 'limited' ? tag : '';
}

function capacity(value: unknown): number | null {
  const tag = text(value);
  if (!/^\d{1,9}$/.test(tag)) return null;
  return Number(tag);
}

/** An http(s) URL as the create endpoint would store it (a bare host gets https://); anything else is dropped. */
function website(value: unknown): string {
  let url = text(value);
  if (!url) return '';
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) url = `https://${url}`;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return '';
  } catch {
    return '';
  }
  return url.length > LIMITS.website ? '' : url;
}

function coordinates(geometry: unknown): { lat: number; lng: number } | null {
  if (typeof geometry !== 'object' || geometry === null) return null;
  const { type, coordinates: position } = geometry as { type?: unknown; coordinates?: unknown };
  if (type !== 'Point' || !Array.isArray(position) || position.length < 2) return null;
  const [lng, lat] = position as unknown[];
  if (typeof lng !== 'number' || typeof lat !== 'number') return null;
  if (!Number.isFinite(lng) || !Number.isFinite(lat) || Math.abs(lng) > 180 || Math.abs(lat) > 90)
    return null;
  return { lat, lng };
}

/**
 * One feature of a map-database export as a library, or why it is skipped. Only the tags named in decisions.md §5
 * are read; the permission and provenance fields are not taken from the file at all.
 */
export function featureToLibrary(
  feature: unknown,
): { ok: true; value: ImportedFields } | { ok: false; reason: SkipReason } {
  const record = (typeof feature === 'object' && feature !== null ? feature : {}) as Record<
    string,
    unknown
  >;
  const position = record.type === 'Feature' ? coordinates(record.geometry) : null;
  if (!position) return { ok: false, reason: 'invalid geometry' };
  const props = (
    typeof record.properties === 'object' && record.properties !== null ? record.properties : {}
  ) as Record<string, unknown>;

  const city = text(props['addr:city']);
  const countryTag = text(props['addr:country']);
  if (!city || !countryTag) return { ok: false, reason: 'no city or country' };
  const country = countryTag.toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) return { ok: false, reason: 'invalid country' };

  const street = text(props['addr:street']);
  const houseNumber = text(props['addr:housenumber']);
  return {
    ok: true,
    value: {
      name: clip(text(props.name), LIMITS.name),
      description: text(props.description),
      address: clip(street ? [street, houseNumber].filter(Boolean).join(' ') : '', LIMITS.address),
      city: clip(city, LIMITS.city),
      country,
      postalCode: clip(text(props['addr:postcode']), LIMITS.postalCode),
      wheelchairAccessible: wheelchair(props.wheelchair),
      capacity: capacity(props.capacity),
      isIndoor: yesNo(props.indoor),
      isLit: yesNo(props.lit),
      website: website(props.website),
      operator: clip(text(props.operator), LIMITS.operator),
      brand: clip(text(props.brand), LIMITS.brand),
      externalId: clip(text(props['@id']) || text(record.id), LIMITS.externalId),
      lat: position.lat,
      lng: position.lng,
      photoKey: null,
      thumbnailKey: null,
    },
  };
}

export interface ImportSummary {
  imported: number;
  skipped: Map<SkipReason, number>;
}

/** `Added A, skipped as duplicate D, invalid I`, each non-zero count followed by its reasons. */
export function summarize({ imported, skipped }: ImportSummary): string {
  const part = (label: string, reasons: [SkipReason, number][]) => {
    const total = reasons.reduce((sum, [, n]) => sum + n, 0);
    const detail = reasons.map(([reason, n]) => `${n} ${reason}`).join(', ');
    return `${label} ${total}${total ? ` (${detail})` : ''}`;
  };
  const entries = [...skipped.entries()];
  const duplicates = entries.filter(([reason]) => DUPLICATE_REASONS.includes(reason));
  const invalid = entries.filter(([reason]) => !DUPLICATE_REASONS.includes(reason));
  return `Added ${imported}, ${part('skipped as duplicate', duplicates)}, ${part('invalid', invalid)}`;
}

/** Names and addresses compared without case, accents, punctuation or extra spaces. */
export function matchText(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Great-circle distance in metres (the spherical earth PostGIS's geography distance approximates closely). */
function metresBetween(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

/** Same normalised name, within SAME_PLACE_METERS, and the same address where both have one. */
export function samePlace(a: NearbyLibrary, b: NearbyLibrary): boolean {
  if (matchText(a.name) !== matchText(b.name)) return false;
  const addressA = matchText(a.address);
  const addressB = matchText(b.address);
  if (addressA && addressB && addressA !== addressB) return false;
  return metresBetween(a, b) <= SAME_PLACE_METERS;
}

/**
 * Imports a GeoJSON FeatureCollection of Point features. Rows are published at once (status approved: the import
 * is a staff action on already-public map data), with origin `import`, no creator and the permission false.
 */
export async function importGeojson(
  app: INestApplicationContext,
  file: string,
  source: string,
): Promise<ImportSummary> {
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code ? `cannot read ${file} (${code})` : `${file} is not valid JSON`, {
      cause: error,
    });
  }
  const { type, features } = (document ?? {}) as { type?: unknown; features?: unknown };
  if (type !== 'FeatureCollection' || !Array.isArray(features)) {
    throw new Error(`${file} is not a GeoJSON FeatureCollection`);
  }

  const database = app.get(Database);
  const createdAt = app.get(Clock).date();
  const writer = new LibraryBulkWriter();
  const skipped = new Map<SkipReason, number>();
  const skip = (reason: SkipReason) => skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  const seen = new Set<string>();
  let imported = 0;

  for (let start = 0; start < features.length; start += BATCH_SIZE) {
    const candidates: ImportedFields[] = [];
    for (const feature of features.slice(start, start + BATCH_SIZE)) {
      const mapped = featureToLibrary(feature);
      if (!mapped.ok) skip(mapped.reason);
      else if (mapped.value.externalId && seen.has(mapped.value.externalId))
        skip('duplicate external_id');
      else {
        if (mapped.value.externalId) seen.add(mapped.value.externalId);
        candidates.push(mapped.value);
      }
    }
    imported += await database.transaction(async (tx) => {
      await writer.lockImports(tx);
      const existing = await writer.presentExternalIds(
        tx,
        candidates.map((c) => c.externalId).filter(Boolean),
      );
      // Id-less candidates are matched by place against the libraries near them.
      const nearby = await writer.librariesNear(
        tx,
        candidates.flatMap((c, index) => (c.externalId ? [] : [{ index, lat: c.lat, lng: c.lng }])),
        SAME_PLACE_METERS + 1,
      );
      const rows: BulkLibrary[] = [];
      for (const [index, candidate] of candidates.entries()) {
        if (candidate.externalId && existing.has(candidate.externalId))
          skip('duplicate external_id');
        else if (
          !candidate.externalId &&
          [...(nearby.get(index) ?? []), ...rows.filter((row) => !row.externalId)].some((other) =>
            samePlace(candidate, other),
          )
        )
          skip('duplicate name and position');
        else
          rows.push({
            ...candidate,
            source,
            status: 'approved',
            submissionOrigin: 'import',
            createdAt,
          });
      }
      return rows.length ? writer.insert(tx, rows) : 0;
    });
  }
  return { imported, skipped };
}

export const importGeojsonCommand: CliCommand = {
  usage:
    'import-geojson FILE [--source S]   import bookcases from a GeoJSON FeatureCollection (origin import)',
  options: { source: { type: 'string' } },
  async run(app, values, positionals) {
    const [file, ...extra] = positionals;
    if (!file || extra.length) throw new UsageError('give exactly one FILE');
    const source = typeof values.source === 'string' ? values.source.trim() : '';
    if ([...source].length > LIMITS.source)
      throw new UsageError(`--source must be at most ${LIMITS.source} characters`);
    return summarize(await importGeojson(app, file, source));
  },
};
