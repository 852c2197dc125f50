import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsString, maxLength, MaxLength, ValidateBy } from 'class-validator';
import { Trim } from './transforms.js';

/** PostgreSQL text cannot hold NUL; refusing it here keeps such input a 422 instead of a database error. */
export const NoNul = () =>
  ValidateBy({
    name: 'noNul',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !value.includes('\u0000'),
      defaultMessage: (args) => `${args?.property ?? 'value'} must not contain NUL characters`,
    },
  });

/**
 * At most `max` characters as PostgreSQL counts them (code points). @MaxLength alone is not enough: its count
 * skips variation selectors, so a value it accepts could overflow a varchar column. Used beside @MaxLength (which
 * documents the limit in OpenAPI), it reports only what @MaxLength lets through, so a value gets one error.
 */
export const MaxChars = (max: number) =>
  ValidateBy({
    name: 'maxChars',
    constraints: [max],
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' || !maxLength(value, max) || [...value].length <= max,
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} must be shorter than or equal to ${max} characters`,
    },
  });

/** Free text: trimmed, a string without NUL, at most `max` characters (as @MaxLength and as PostgreSQL counts them). */
export const Text = (max: number) =>
  applyDecorators(Trim(), IsString(), NoNul(), MaxLength(max), MaxChars(max));

/** An optional `Text` field, documented in OpenAPI with its limit. */
export const OptionalText = (max: number) =>
  applyDecorators(
    ApiProperty({ required: false, type: 'string', maxLength: max }),
    IsOptional(),
    Text(max),
  );
