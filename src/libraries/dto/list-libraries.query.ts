import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsNumber,
  IsOptional,
  Max,
  Min,
  ValidateIf,
  IsInt,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { PaginationQueryDto } from '../../common/pagination/pagination.js';
import { ToBoolean, ToInt, ToNumber } from '../../common/validation/transforms.js';
import { OptionalText } from '../../common/validation/text-rules.js';
import { CountryFilter } from './library-fields.js';

@ValidatorConstraint({ name: 'needsLocation' })
class NeedsLocation implements ValidatorConstraintInterface {
  validate(_value: unknown, args: ValidationArguments): boolean {
    const query = args.object as { lat?: unknown; lng?: unknown };
    return query.lat !== undefined && query.lng !== undefined;
  }

  defaultMessage(): string {
    return 'radius_km needs lat and lng';
  }
}

export class ListLibrariesQueryDto extends PaginationQueryDto {
  /**
   * Full-text search over name and description (accent- and case-insensitive; every word must match, as a word
   * prefix). Libraries whose name holds every word come first, then the others; newest first within each.
   */
  @OptionalText(200)
  q?: string;

  /** Substring search over name, description, city, address and postal code; name matches first. Wins over q. */
  @OptionalText(200)
  search?: string;

  /** Case-insensitive substring of the city. */
  @OptionalText(100)
  city?: string;

  /** Two-letter country code, case-insensitive. */
  @CountryFilter({ message: 'country must be two letters' })
  country?: string;

  /** Substring of the postal code. */
  @OptionalText(20)
  postal_code?: string;

  /** Only libraries with (true) or without (false) a primary or approved community photo. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  has_photo?: boolean;

  /** With lng: nearest first. */
  @ValidateIf((query: ListLibrariesQueryDto) => query.lat !== undefined || query.lng !== undefined)
  @IsDefined({ message: 'lat and lng must be given together' })
  @ToNumber()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-90)
  @Max(90)
  lat?: number;

  @ValidateIf((query: ListLibrariesQueryDto) => query.lat !== undefined || query.lng !== undefined)
  @IsDefined({ message: 'lat and lng must be given together' })
  @ToNumber()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-180)
  @Max(180)
  lng?: number;

  /** Only within this many kilometres of lat/lng (1–100; needs lat and lng). */
  @IsOptional()
  @ToNumber()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  @Max(100)
  @Validate(NeedsLocation)
  radius_km?: number;
}

export class LatestLibrariesQueryDto {
  /** How many (1–50, default 10). */
  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(1)
  @Max(50)
  @ApiPropertyOptional({ type: 'integer' })
  limit: number = 10;

  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  has_photo?: boolean;
}
