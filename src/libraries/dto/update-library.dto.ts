import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import {
  apply,
  CITY_RULES,
  COUNTRY_RULES,
  LATITUDE_RULES,
  LibraryOptionalFields,
  LONGITUDE_RULES,
  PHOTO_PROPERTY,
} from './library-fields.js';

/** PATCH /libraries/{slug}: any submission field; latitude and longitude only together. */
export class UpdateLibraryDto extends LibraryOptionalFields {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100 })
  @IsOptional()
  @apply(...CITY_RULES)
  city?: string;

  @ApiPropertyOptional({ example: 'DE' })
  @IsOptional()
  @apply(...COUNTRY_RULES)
  country?: string;

  @ApiPropertyOptional({ minimum: -90, maximum: 90 })
  @IsOptional()
  @apply(...LATITUDE_RULES)
  latitude?: number;

  @ApiPropertyOptional({ minimum: -180, maximum: 180 })
  @IsOptional()
  @apply(...LONGITUDE_RULES)
  longitude?: number;
}

export class UpdateLibraryForm extends UpdateLibraryDto {
  @PHOTO_PROPERTY
  photo?: unknown;
}

/** Fields an owner can never set: 400 `Unsupported field: <name>.` with nothing changed. */
export const PROTECTED_LIBRARY_FIELDS = [
  'mapdb_submission_allowed',
  'mapdb_submission_allowed_at',
  'status',
  'slug',
  'submission_origin',
  'origin',
  'source',
  'external_id',
  'created_by',
  'created_at',
  'updated_at',
  'id',
  'rejection_reason',
  'pending_changes',
  'pending_photo',
  'ai_generated_fields',
  'is_favourited',
  'photo_url',
  'thumbnail_url',
] as const;
