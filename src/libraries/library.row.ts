import type {
  PendingPhoto,
  LibraryStatus,
  SubmissionOrigin,
  Wheelchair,
} from './library.entity.js';
import type { PublicLibraryColumns } from './library.mapper.js';

/** A library as the repository's SQL returns it (snake_case columns, coordinates split out). */
export interface LibraryRow {
  id: number;
  slug: string;
  name: string;
  description: string;
  photo_key: string | null;
  thumbnail_key: string | null;
  lat: number;
  lng: number;
  address: string;
  city: string;
  country: string;
  postal_code: string;
  wheelchair_accessible: Wheelchair;
  capacity: number | null;
  is_indoor: boolean | null;
  is_lit: boolean | null;
  website: string;
  contact: string;
  source: string;
  external_id: string;
  operator: string;
  brand: string;
  created_at: Date;
  status: LibraryStatus;
  rejection_reason: string;
  mapdb_submission_allowed: boolean;
  submission_origin: SubmissionOrigin;
  created_by: number | null;
  pending_changes: Record<string, unknown> | null;
  pending_photo: PendingPhoto | null;
  ai_generated_fields: string[];
  is_favourited: boolean;
}

/**
 * A row of a public list page (list-query's LIST_ITEM_COLUMNS plus is_favourited). Its `created_at` is a Date, or,
 * read with PreparedReader's `timestamps: 'iso'`, already the ISO 8601 text the response sends (isoTimestamptz).
 */
export type ListItemRow = Omit<PublicLibraryColumns, 'created_at'> &
  Pick<LibraryRow, 'lat' | 'lng' | 'is_favourited'> & { created_at: Date | string };

export interface CommunityPhotoRow {
  id: number;
  caption: string;
  photo_key: string;
  thumbnail_key: string;
  created_at: Date;
}

/** The writable columns of a library, as the create and edit flows set them. */
export interface LibraryValues {
  name: string;
  description: string;
  address: string;
  city: string;
  country: string;
  postal_code: string;
  wheelchair_accessible: Wheelchair;
  capacity: number | null;
  is_indoor: boolean | null;
  is_lit: boolean | null;
  website: string;
  contact: string;
  operator: string;
  brand: string;
  latitude: number;
  longitude: number;
}

/** The columns a query selects (as `l.x AS library_x`) to show the library a report or photo belongs to. */
export interface LibraryRefColumns {
  library_id: number;
  library_slug: string;
  library_name: string;
  library_city: string;
  library_country: string;
  library_status: string;
}
