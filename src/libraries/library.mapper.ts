import { Injectable } from '@nestjs/common';
import { MediaStorage } from '../common/media/media-storage.js';
import type {
  CommunityPhotoItemResponse,
  CountryResponse,
  CreatedLibraryResponse,
  LibraryDetailResponse,
  LibraryItemResponse,
  LibraryRefResponse,
  MyLibraryResponse,
  OwnerLibraryResponse,
} from './dto/library.response.js';
import type {
  CommunityPhotoRow,
  LibraryRefColumns,
  LibraryRow,
  ListItemRow,
} from './library.row.js';

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** English short name of an ISO 3166-1 alpha-2 code (`IT` → Italy). */
export function countryName(code: string): string {
  try {
    return regionNames.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** The pair of regional-indicator symbols of a two-letter code. */
export function flagEmoji(code: string): string {
  return [...code.toUpperCase()]
    .map((char) => String.fromCodePoint(0x1f1e6 + char.charCodeAt(0) - 65))
    .join('');
}

/** `{id, slug, name, city, country, status}` of the library a report or photo belongs to. */
export function libraryRef(row: LibraryRefColumns): LibraryRefResponse {
  return {
    id: row.library_id,
    slug: row.library_slug,
    name: row.library_name,
    city: row.library_city,
    country: row.library_country,
    status: row.library_status,
  };
}

/** The columns publicLibraryFields reads. */
export type PublicLibraryColumns = Pick<
  LibraryRow,
  | 'id'
  | 'slug'
  | 'name'
  | 'description'
  | 'photo_key'
  | 'thumbnail_key'
  | 'address'
  | 'city'
  | 'country'
  | 'postal_code'
  | 'wheelchair_accessible'
  | 'capacity'
  | 'is_indoor'
  | 'is_lit'
  | 'website'
  | 'contact'
  | 'source'
  | 'operator'
  | 'brand'
  | 'created_at'
>;

/**
 * The public fields of a library item that do not depend on the caller, less the coordinates: the list item adds
 * `lat`, `lng` and `is_favourited`; the open-data export puts the coordinates in its geometry.
 */
export function publicLibraryFields(
  row: PublicLibraryColumns,
  mediaUrl: (key: string | null | undefined) => string,
): Omit<LibraryItemResponse, 'lat' | 'lng' | 'is_favourited'> {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    photo_url: mediaUrl(row.photo_key),
    thumbnail_url: mediaUrl(row.thumbnail_key),
    address: row.address,
    city: row.city,
    country: row.country,
    postal_code: row.postal_code,
    wheelchair_accessible: row.wheelchair_accessible,
    capacity: row.capacity,
    is_indoor: row.is_indoor,
    is_lit: row.is_lit,
    website: row.website,
    contact: row.contact,
    source: row.source,
    operator: row.operator,
    brand: row.brand,
    created_at: isoTime(row.created_at),
  };
}

/** ISO 8601 UTC with milliseconds of a timestamp column (a Date from `pg`; a copy only for anything else). */
export function isoTime(value: Date | string | number): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/**
 * Decides every public field of a library. Nothing internal (permission, provenance, staged changes, the
 * submitter) appears unless a method for the owner's view adds it.
 */
@Injectable()
export class LibraryMapper {
  constructor(private readonly media: MediaStorage) {}

  /**
   * publicLibraryFields plus the coordinates and `is_favourited`, in the same order, written out as one object: a
   * list page maps 20 rows per request, and spreading a second object into each (with a closure for the URLs) cost
   * twice the allocations (issue 22). library.mapper.spec.ts holds the two to the same bytes.
   */
  item(row: ListItemRow): LibraryItemResponse {
    const media = this.media;
    return {
      id: row.id,
      slug: row.slug,
      name: row.name,
      description: row.description,
      photo_url: media.url(row.photo_key),
      thumbnail_url: media.url(row.thumbnail_key),
      address: row.address,
      city: row.city,
      country: row.country,
      postal_code: row.postal_code,
      wheelchair_accessible: row.wheelchair_accessible,
      capacity: row.capacity,
      is_indoor: row.is_indoor,
      is_lit: row.is_lit,
      website: row.website,
      contact: row.contact,
      source: row.source,
      operator: row.operator,
      brand: row.brand,
      // A string is the ISO 8601 text PreparedReader's `timestamps: 'iso'` made (isoTimestamptz): already the answer.
      created_at: typeof row.created_at === 'string' ? row.created_at : isoTime(row.created_at),
      lat: Number(row.lat),
      lng: Number(row.lng),
      is_favourited: Boolean(row.is_favourited),
    };
  }

  detail(row: LibraryRow, photos: CommunityPhotoRow[]): LibraryDetailResponse {
    const detail: LibraryDetailResponse = this.item(row) as LibraryDetailResponse;
    detail.photos = photos.map((photo) => this.communityPhoto(photo));
    // Only its submitter reads a rejected library (the iOS app opens it from the contributions screen): it says why.
    if (row.status !== 'rejected') return detail;
    return { ...detail, status: row.status, rejection_reason: row.rejection_reason };
  }

  created(row: LibraryRow): CreatedLibraryResponse {
    return { ...this.item(row), mapdb_submission_allowed: row.mapdb_submission_allowed };
  }

  owner(row: LibraryRow): OwnerLibraryResponse {
    return { ...this.item(row), status: row.status, pending_changes: this.pendingChanges(row) };
  }

  mine(row: LibraryRow): MyLibraryResponse {
    return {
      ...this.owner(row),
      rejection_reason: row.rejection_reason,
      mapdb_submission_allowed: row.mapdb_submission_allowed,
    };
  }

  communityPhoto(photo: CommunityPhotoRow): CommunityPhotoItemResponse {
    return {
      id: photo.id,
      caption: photo.caption,
      photo_url: this.media.url(photo.photo_key),
      thumbnail_url: this.media.url(photo.thumbnail_key),
      created_at: isoTime(photo.created_at),
    };
  }

  country(row: { country: string; count: number }): CountryResponse {
    return {
      country_code: row.country,
      country_name: countryName(row.country),
      flag_emoji: flagEmoji(row.country),
      count: row.count,
    };
  }

  /** Staged field changes, with a staged photo shown as its URLs; null when nothing awaits moderation. */
  pendingChanges(
    row: Pick<LibraryRow, 'pending_changes' | 'pending_photo'>,
  ): Record<string, unknown> | null {
    if (!row.pending_changes && !row.pending_photo) return null;
    return {
      ...(row.pending_changes ?? {}),
      ...(row.pending_photo
        ? {
            photo_url: this.media.url(row.pending_photo.photo_key),
            thumbnail_url: this.media.url(row.pending_photo.thumbnail_key),
          }
        : {}),
    };
  }
}
