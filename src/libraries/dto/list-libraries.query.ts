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
import { MAX_PAGE_SIZE, PaginationQueryDto } from '../../common/pagination/pagination.js';
import {
  plainBoolean,
  plainInt,
  plainNumber,
  plainText,
  readPlainQueriesWith,
} from '../../common/validation/plain-query.js';
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

/**
 * A list query as the validation stack turns it into a ListLibrariesQueryDto, when every parameter is one of the
 * DTO's, given once, and plainly valid by the rules above (same transforms, same bounds); null otherwise, and the
 * stack validates it and reports what is wrong. Every list-filters and proximity-random request of the bench is read
 * here (issue 22: class-validator cost about 0.05 ms of Node CPU per such request). list-libraries.query.spec.ts
 * holds it to the stack's answer on generated and awkward queries.
 */
export function readListQuery(
  query: Readonly<Record<string, unknown>>,
): ListLibrariesQueryDto | null {
  const dto = new ListLibrariesQueryDto();
  for (const key of Object.keys(query)) {
    const read = LIST_QUERY_PARAMETERS.get(key);
    const value = read ? read(query[key]) : undefined;
    if (value === undefined) return null;
    (dto as unknown as Record<string, unknown>)[key] = value;
  }
  if ((dto.lat === undefined) !== (dto.lng === undefined)) return null;
  if (dto.radius_km !== undefined && dto.lat === undefined) return null;
  return dto;
}

/** Each parameter of ListLibrariesQueryDto as its rules turn plainly valid text into its value. */
const LIST_QUERY_PARAMETERS = new Map<
  string,
  (raw: unknown) => string | number | boolean | undefined
>([
  ['page', (raw) => plainInt(raw, 1, Infinity)],
  ['page_size', (raw) => plainInt(raw, 1, MAX_PAGE_SIZE)],
  ['q', (raw) => plainText(raw, 200)],
  ['search', (raw) => plainText(raw, 200)],
  ['city', (raw) => plainText(raw, 100)],
  ['country', (raw) => plainCountry(raw)],
  ['postal_code', (raw) => plainText(raw, 20)],
  ['has_photo', (raw) => plainBoolean(raw)],
  ['lat', (raw) => plainNumber(raw, -90, 90)],
  ['lng', (raw) => plainNumber(raw, -180, 180)],
  ['radius_km', (raw) => plainNumber(raw, 1, 100)],
]);

/** As CountryFilter (Trim, two letters) accepts it; undefined when it would not. */
function plainCountry(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  return /^[A-Za-z]{2}$/.test(text) ? text : undefined;
}

readPlainQueriesWith(ListLibrariesQueryDto, readListQuery);

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
