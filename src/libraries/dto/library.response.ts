import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PaginationMeta } from '../../common/pagination/pagination.js';

/** The public list item: exactly the spec's 23 fields. */
export class LibraryItemResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  slug: string;
  name: string;
  description: string;
  /** Site-relative media path, "" when none. */
  photo_url: string;
  thumbnail_url: string;
  lat: number;
  lng: number;
  address: string;
  city: string;
  /** ISO 3166-1 alpha-2 */
  country: string;
  postal_code: string;
  @ApiProperty({ enum: ['yes', 'no', 'limited', ''], description: '"" when unknown' })
  wheelchair_accessible: string;
  @ApiProperty({ type: 'integer', nullable: true })
  capacity: number | null;
  is_indoor: boolean | null;
  is_lit: boolean | null;
  website: string;
  contact: string;
  source: string;
  operator: string;
  brand: string;
  /** ISO 8601 UTC with milliseconds */
  created_at: string;
  /** Whether the authenticated caller favourited it (false for anonymous callers). */
  is_favourited: boolean;
}

export class CommunityPhotoItemResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  caption: string;
  photo_url: string;
  thumbnail_url: string;
  created_at: string;
}

export class LibraryDetailResponse extends LibraryItemResponse {
  /** Approved community photos, newest first. */
  @ApiProperty({ type: [CommunityPhotoItemResponse] })
  photos: CommunityPhotoItemResponse[];

  /** Only in the submitter's own view of a rejected library. */
  @ApiPropertyOptional({ enum: ['rejected'] })
  status?: string;

  /** Only in the submitter's own view of a rejected library; "" when no reason was given. */
  rejection_reason?: string;
}

/** The create response: the item plus the submitter's own permission value. */
export class CreatedLibraryResponse extends LibraryItemResponse {
  mapdb_submission_allowed: boolean;
}

/** The owner's view after an edit: published values, moderation status and the staged changes. */
export class OwnerLibraryResponse extends LibraryItemResponse {
  @ApiProperty({ enum: ['pending', 'approved', 'rejected'] })
  status: string;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  pending_changes: Record<string, unknown> | null;
}

/** An item of GET /libraries/mine. */
export class MyLibraryResponse extends OwnerLibraryResponse {
  rejection_reason: string;
  mapdb_submission_allowed: boolean;
}

export class LibraryPageResponse {
  @ApiProperty({ type: [LibraryItemResponse] })
  items: LibraryItemResponse[];

  pagination: PaginationMeta;
}

export class MyLibraryPageResponse {
  @ApiProperty({ type: [MyLibraryResponse] })
  items: MyLibraryResponse[];

  pagination: PaginationMeta;
}

export class LatestLibrariesResponse {
  @ApiProperty({ type: [LibraryItemResponse] })
  items: LibraryItemResponse[];
}

export class CountryResponse {
  country_code: string;
  country_name: string;
  flag_emoji: string;
  @ApiProperty({ type: 'integer' })
  count: number;
}

export class CountryListResponse {
  @ApiProperty({ type: [CountryResponse] })
  items: CountryResponse[];
}

export class LibraryRefResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  slug: string;
  name: string;
  city: string;
  country: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected'] })
  status: string;
}

export class MyReportResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  library: LibraryRefResponse;
  reason: string;
  @ApiProperty({ enum: ['open', 'resolved', 'dismissed'] })
  status: string;
  created_at: string;
}

export class MyReportPageResponse {
  @ApiProperty({ type: [MyReportResponse] })
  items: MyReportResponse[];

  pagination: PaginationMeta;
}

export class MyPhotoResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  library: LibraryRefResponse;
  caption: string;
  photo_url: string;
  thumbnail_url: string;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected'] })
  status: string;
  created_at: string;
}

export class MyPhotoPageResponse {
  @ApiProperty({ type: [MyPhotoResponse] })
  items: MyPhotoResponse[];

  pagination: PaginationMeta;
}

export class ReportCreatedResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  reason: string;
  created_at: string;
}
