import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { ToBoolean } from '../../common/validation/transforms.js';
import {
  apply,
  CITY_RULES,
  COUNTRY_RULES,
  LATITUDE_RULES,
  LibraryOptionalFields,
  LONGITUDE_RULES,
  PHOTO_PROPERTY,
} from './library-fields.js';

/** The text fields of POST /libraries/ (multipart/form-data; the file is `photo`). */
export class CreateLibraryDto extends LibraryOptionalFields {
  @ApiProperty({ minLength: 1, maxLength: 100 })
  @apply(...CITY_RULES)
  city: string;

  @ApiProperty({ example: 'DE', description: 'ISO 3166-1 alpha-2, stored upper-case' })
  @apply(...COUNTRY_RULES)
  country: string;

  @ApiProperty({ minimum: -90, maximum: 90 })
  @apply(...LATITUDE_RULES)
  latitude: number;

  @ApiProperty({ minimum: -180, maximum: 180 })
  @apply(...LONGITUDE_RULES)
  longitude: number;

  /** The submitter allows later manual review for contribution to the map database. Default false. */
  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  mapdb_submission_allowed?: boolean;
}

/** OpenAPI shape of the whole multipart form. */
export class CreateLibraryForm extends CreateLibraryDto {
  @PHOTO_PROPERTY
  photo: unknown;
}
