import { publicLibraryFields } from '../libraries/library.mapper.js';
import type { ExportFileStats, ExportLibraryRow } from './export.repository.js';

/** Bumped when a field is removed or changes meaning (adding one is compatible). */
export const EXPORT_SCHEMA_VERSION = 1;

export const ODBL = {
  id: 'ODbL-1.0',
  name: 'Open Data Commons Open Database License (ODbL) 1.0',
  url: 'https://opendatacommons.org/licenses/odbl/1-0/',
} as const;

export const PHOTO_RIGHTS_NOTICE =
  'Photos are not part of the database and are not licensed under the ODbL. The export holds only links to ' +
  'them (photo_url, thumbnail_url); each photo remains the work of its contributor, and reusing it needs their ' +
  'permission or another licence that covers it.';

/** Every property of a feature, described for metadata.json (and the README's Open data section). */
export const FIELD_DESCRIPTIONS: Readonly<Record<string, string>> = {
  id: 'Integer id of the library in this directory; stable.',
  slug: 'URL name of the library (GET /api/v1/libraries/{slug}); stable.',
  name: 'Name ("" when unknown).',
  description: 'Free-text description ("" when none).',
  photo_url: 'Site-relative path of the main photo under /media/ ("" when none). See photo_rights.',
  thumbnail_url: 'Site-relative path of the 400 px thumbnail ("" when none). See photo_rights.',
  address: 'Street address ("" when unknown).',
  city: 'City.',
  country: 'ISO 3166-1 alpha-2 country code, upper case.',
  postal_code: 'Postal code ("" when unknown).',
  wheelchair_accessible: '"yes", "no", "limited", or "" when unknown.',
  capacity: 'Approximate number of books it holds (integer), or null when unknown.',
  is_indoor: 'true when indoors, false when outdoors, null when unknown.',
  is_lit: 'true when lit at night, false when not, null when unknown.',
  website: 'http(s) URL ("" when none).',
  contact: 'Public contact given for the library ("" when none).',
  source: 'Where the record came from, e.g. the name of an import ("" for direct submissions).',
  operator: 'Who operates it ("" when unknown).',
  brand: 'Brand, e.g. "Little Free Library" ("" when none).',
  external_id:
    'Identifier in the source it was imported from, e.g. an OpenStreetMap "node/123" ("" when none).',
  created_at: 'When it was added to the directory (UTC ISO 8601).',
  updated_at: 'When its record last changed (UTC ISO 8601).',
};

/** Site-relative media URL, as the API shows it. */
export type MediaUrl = (key: string | null | undefined) => string;

/**
 * One GeoJSON Point feature (RFC 7946: coordinates are [longitude, latitude]). Its properties are the public fields
 * of a library list item, as the list's mapper decides them (less the caller-specific `is_favourited`; the
 * coordinates are the geometry), plus `external_id` and `updated_at`. Nothing else of the row can reach the file.
 */
export function libraryFeature(row: ExportLibraryRow, mediaUrl: MediaUrl): object {
  return {
    type: 'Feature',
    id: row.id,
    geometry: { type: 'Point', coordinates: [Number(row.lng), Number(row.lat)] },
    properties: {
      ...publicLibraryFields(row, mediaUrl),
      external_id: row.external_id,
      updated_at: new Date(row.updated_at).toISOString(),
    },
  };
}

export function attribution(serviceName: string): string {
  return `${serviceName} contributors and OpenStreetMap contributors`;
}

/**
 * The FeatureCollection opens with its licence as foreign members (they hold no timestamp, so unchanged data gives
 * identical bytes) and one feature per line follows.
 */
export function collectionHead(serviceName: string): string {
  return `{"type":"FeatureCollection","licence":${JSON.stringify(ODBL.id)},"attribution":${JSON.stringify(attribution(serviceName))},"features":[`;
}

export const COLLECTION_TAIL = '\n]}\n';

export interface ExportMetadata {
  schema_version: number;
  generated_at: string;
  record_count: number;
  format: string;
  files: {
    geojson: { name: string } & ExportFileStats;
    geojson_gz: { name: string } & ExportFileStats;
  };
  licence: { id: string; name: string; url: string; attribution: string };
  photo_rights: string;
  fields: Record<string, string>;
}

export function exportMetadata(input: {
  serviceName: string;
  generatedAt: Date;
  recordCount: number;
  geojson: { name: string } & ExportFileStats;
  gz: { name: string } & ExportFileStats;
}): ExportMetadata {
  return {
    schema_version: EXPORT_SCHEMA_VERSION,
    generated_at: input.generatedAt.toISOString(),
    record_count: input.recordCount,
    format:
      'GeoJSON (RFC 7946) FeatureCollection of Point features in WGS 84, one per approved library, ' +
      'in id order; the .gz file is the same bytes compressed with gzip.',
    files: {
      geojson: {
        name: input.geojson.name,
        bytes: input.geojson.bytes,
        sha256: input.geojson.sha256,
      },
      geojson_gz: { name: input.gz.name, bytes: input.gz.bytes, sha256: input.gz.sha256 },
    },
    licence: { ...ODBL, attribution: attribution(input.serviceName) },
    photo_rights: PHOTO_RIGHTS_NOTICE,
    fields: { ...FIELD_DESCRIPTIONS },
  };
}

/** `libraries-20260615T120000Z`: the version's UTC time to the second. */
export function fileStem(generatedAt: Date): string {
  return `libraries-${generatedAt
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '')}`;
}
