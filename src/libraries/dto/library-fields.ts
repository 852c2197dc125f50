import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  Length,
  Matches,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  isISO31661Alpha2,
  type ValidationOptions,
} from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { ToBoolean, ToInt, ToNumber, Trim } from '../../common/validation/transforms.js';

/** A bare host gets `https://`; anything with another scheme is left as is (and fails the URL check). */
export function normaliseWebsite(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return '';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  if (/^[a-z][a-z0-9+.-]*:(?!\d)/i.test(text)) return text;
  return `https://${text}`;
}

import { MaxChars, NoNul, OptionalText } from '../../common/validation/text-rules.js';

const URL_RULES = { protocols: ['http', 'https'], require_protocol: true, require_tld: true };

/** Optional fields of a submission, shared by create (POST) and owner edit (PATCH). */
export class LibraryOptionalFields {
  /** Proper name; left blank, AI enrichment may fill it. */
  @OptionalText(255)
  name?: string;

  /** 1–3 sentences; also the image alt text. Left blank, AI enrichment may fill it. */
  @OptionalText(2000)
  description?: string;

  @OptionalText(255)
  address?: string;

  @OptionalText(20)
  postal_code?: string;

  @ApiPropertyOptional({ enum: ['yes', 'no', 'limited'] })
  @IsOptional()
  @Trim()
  @IsIn(['yes', 'no', 'limited', ''])
  wheelchair_accessible?: '' | 'yes' | 'no' | 'limited';

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 1_000_000 })
  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  @ApiPropertyOptional({ type: 'integer' })
  capacity?: number;

  @ApiPropertyOptional({ type: 'boolean' })
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  is_indoor?: boolean;

  @ApiPropertyOptional({ type: 'boolean' })
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  is_lit?: boolean;

  /** http(s) URL; a bare host gets https://; "" leaves it unset. */
  @ApiPropertyOptional({
    type: 'string',
    maxLength: 500,
    description: 'http(s) URL; a bare host gets https://',
  })
  @IsOptional()
  @ValidateIf((_dto: unknown, value: unknown) => value !== '')
  @Transform(({ value }) => normaliseWebsite(value))
  @IsString()
  @MaxLength(500)
  @MaxChars(500)
  @IsUrl(URL_RULES, { message: 'website must be an http(s) URL' })
  website?: string;

  @OptionalText(255)
  contact?: string;

  @OptionalText(255)
  operator?: string;

  @OptionalText(255)
  brand?: string;
}

export const CITY_RULES = [
  Trim(),
  IsString(),
  IsNotEmpty(),
  NoNul(),
  MaxLength(100),
  MaxChars(100),
];
/**
 * User-assigned codes that Apple MapKit and CLDR use for a country ISO 3166-1 has not assigned: `XK` (Kosovo;
 * CLDR names it and gives it a flag, so countryName/flagEmoji need nothing more).
 */
export const USER_ASSIGNED_COUNTRY_CODES: readonly string[] = ['XK'];

/** An ISO 3166-1 alpha-2 code, or one of USER_ASSIGNED_COUNTRY_CODES. */
const IsCountryCode = () =>
  ValidateBy({
    name: 'isCountryCode',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' &&
        (isISO31661Alpha2(value) || USER_ASSIGNED_COUNTRY_CODES.includes(value)),
      defaultMessage: () => 'country must be an ISO 3166-1 alpha-2 code',
    },
  });

export const COUNTRY_RULES = [
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toUpperCase() : value,
  ),
  IsCountryCode(),
];

const COUNTRY_FILTER = /^[A-Za-z]{2}$/;

/** A filter on the two-letter country code, any case (lists and moderation queues). */
export const CountryFilter = (options?: ValidationOptions) =>
  applyDecorators(
    ApiProperty({
      required: false,
      type: 'string',
      minLength: 2,
      maxLength: 2,
      pattern: COUNTRY_FILTER.source,
    }),
    IsOptional(),
    Trim(),
    IsString(),
    Length(2, 2),
    Matches(COUNTRY_FILTER, options),
  );

export const LATITUDE_RULES = [
  ToNumber(),
  IsNumber({ allowNaN: false, allowInfinity: false }),
  Min(-90),
  Max(90),
];
export const LONGITUDE_RULES = [
  ToNumber(),
  IsNumber({ allowNaN: false, allowInfinity: false }),
  Min(-180),
  Max(180),
];

export function apply(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => decorators.forEach((decorator) => decorator(target, key));
}

export const PHOTO_PROPERTY = ApiProperty({
  type: 'string',
  format: 'binary',
  description: 'JPEG, PNG or WEBP, max 8 MB',
});
