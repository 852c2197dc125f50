import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Min, ValidateIf } from 'class-validator';
import { PaginationQueryDto, PaginationMeta } from '../../common/pagination/pagination.js';
import { OptionalText, Text } from '../../common/validation/text-rules.js';
import { ToInt } from '../../common/validation/transforms.js';
import { apply, CountryFilter } from '../../libraries/dto/library-fields.js';
import { LibraryItemResponse, LibraryRefResponse } from '../../libraries/dto/library.response.js';
import {
  PROTECTED_LIBRARY_FIELDS,
  UpdateLibraryDto,
} from '../../libraries/dto/update-library.dto.js';
import { REPORT_REASONS } from '../../reports/dto/create-report.dto.js';

export const LIBRARY_STATUSES = ['pending', 'approved', 'rejected'] as const;
export const REPORT_STATUSES = ['open', 'resolved', 'dismissed'] as const;
export const PHOTO_STATUSES = ['pending', 'approved', 'rejected'] as const;

export class ModerationLibrariesQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: ['all', ...LIBRARY_STATUSES], default: 'all' })
  @IsOptional()
  @IsIn(['all', ...LIBRARY_STATUSES])
  status: string = 'all';

  /** Case-insensitive substring of name, address or city. */
  @OptionalText(200)
  q?: string;

  @CountryFilter()
  country?: string;

  @OptionalText(100)
  source?: string;
}

export class ModerationReportsQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: ['all', ...REPORT_STATUSES], default: 'all' })
  @IsOptional()
  @IsIn(['all', ...REPORT_STATUSES])
  status: string = 'all';

  @ApiPropertyOptional({ enum: ['all', ...REPORT_REASONS], default: 'all' })
  @IsOptional()
  @IsIn(['all', ...REPORT_REASONS])
  reason: string = 'all';
}

export class ModerationPhotosQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: ['all', ...PHOTO_STATUSES], default: 'all' })
  @IsOptional()
  @IsIn(['all', ...PHOTO_STATUSES])
  status: string = 'all';
}

export class IdParamDto {
  @ToInt()
  @IsInt()
  @Min(1)
  @ApiProperty({ type: 'integer' })
  id: number;
}

/** A rejection reason: optional (null or absent), else text of at most 2000 characters. */
const REJECTION_REASON_RULES = [
  ValidateIf(
    (dto: { rejection_reason?: unknown }) =>
      dto.rejection_reason !== undefined && dto.rejection_reason !== null,
  ),
  Text(2000),
];

export class UpdateLibraryStatusDto {
  @ApiProperty({ enum: LIBRARY_STATUSES })
  @IsIn(LIBRARY_STATUSES)
  status: (typeof LIBRARY_STATUSES)[number];

  /** Shown to the submitter; kept only while the library is rejected. */
  @apply(...REJECTION_REASON_RULES)
  rejection_reason?: string | null;
}

/**
 * PATCH /libraries/moderation/{slug}: a status change, a staff edit of any submission field, or both. JSON, or a
 * multipart form whose `photo` replaces the primary photo. Origin, permission and provenance stay read-only.
 */
export class StaffUpdateLibraryDto extends UpdateLibraryDto {
  @ApiPropertyOptional({ enum: LIBRARY_STATUSES })
  @IsOptional()
  @IsIn(LIBRARY_STATUSES)
  status?: (typeof LIBRARY_STATUSES)[number];

  /** Shown to the submitter; kept only while the library is rejected. */
  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: 2000 })
  @apply(...REJECTION_REASON_RULES)
  rejection_reason?: string | null;
}

/** OpenAPI shape of the staff edit as a multipart form: the JSON fields and an optional new `photo`. */
export class StaffUpdateLibraryForm extends StaffUpdateLibraryDto {
  @ApiPropertyOptional({
    type: 'string',
    format: 'binary',
    description: 'Replaces the primary photo: JPEG, PNG or WEBP, max 8 MB',
  })
  photo?: unknown;
}

/** Fields staff never set through the edit: 400 `Unsupported field: <name>.` (the permission only via withdrawal). */
export const STAFF_PROTECTED_LIBRARY_FIELDS = PROTECTED_LIBRARY_FIELDS.filter(
  (field) => field !== 'status' && field !== 'rejection_reason',
);

export class UpdateReportStatusDto {
  @ApiProperty({ enum: REPORT_STATUSES })
  @IsIn(REPORT_STATUSES)
  status: (typeof REPORT_STATUSES)[number];
}

export class UpdatePhotoStatusDto {
  @ApiProperty({ enum: PHOTO_STATUSES })
  @IsIn(PHOTO_STATUSES)
  status: (typeof PHOTO_STATUSES)[number];
}

export class ReviewChangesDto {
  @ApiProperty({ enum: ['approve', 'reject'] })
  @IsIn(['approve', 'reject'])
  action: 'approve' | 'reject';
}

export class UserRefResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  username: string;
}

export class ModerationLibraryResponse extends LibraryItemResponse {
  @ApiProperty({ enum: LIBRARY_STATUSES })
  status: string;
  /** "" when none */
  rejection_reason: string;
  @ApiProperty({ type: UserRefResponse, nullable: true })
  created_by: UserRefResponse | null;
  /** Staged owner edits awaiting review (with staged photo URLs), null when none. */
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  pending_changes: Record<string, unknown> | null;
}

export class ModerationLibraryPageResponse {
  @ApiProperty({ type: [ModerationLibraryResponse] })
  items: ModerationLibraryResponse[];
  pagination: PaginationMeta;
}

export class ModerationLibraryRefResponse extends LibraryRefResponse {
  address: string;
}

export class ModerationReportResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  library: ModerationLibraryRefResponse;
  @ApiProperty({ type: UserRefResponse, nullable: true })
  created_by: UserRefResponse | null;
  reason: string;
  details: string;
  photo_url: string;
  @ApiProperty({ enum: REPORT_STATUSES })
  status: string;
  created_at: string;
}

export class ModerationReportPageResponse {
  @ApiProperty({ type: [ModerationReportResponse] })
  items: ModerationReportResponse[];
  pagination: PaginationMeta;
}

export class ModerationPhotoResponse {
  @ApiProperty({ type: 'integer' })
  id: number;
  library: ModerationLibraryRefResponse;
  @ApiProperty({ type: UserRefResponse, nullable: true })
  created_by: UserRefResponse | null;
  caption: string;
  /** "" while the photo is rejected (its files are withdrawn from public view) */
  photo_url: string;
  /** "" while the photo is rejected */
  thumbnail_url: string;
  @ApiProperty({ enum: PHOTO_STATUSES })
  status: string;
  created_at: string;
}

export class ModerationPhotoPageResponse {
  @ApiProperty({ type: [ModerationPhotoResponse] })
  items: ModerationPhotoResponse[];
  pagination: PaginationMeta;
}

export class ModerationSummaryResponse {
  @ApiProperty({ type: 'integer' })
  pending_libraries_count: number;
  @ApiProperty({ type: 'integer' })
  open_reports_count: number;
  @ApiProperty({ type: 'integer' })
  pending_photos_count: number;
  /** The sum of the three counts above */
  @ApiProperty({ type: 'integer' })
  total_pending: number;
  /** Approved libraries */
  @ApiProperty({ type: 'integer' })
  total_libraries: number;
  @ApiProperty({ type: 'integer' })
  total_users: number;
}
