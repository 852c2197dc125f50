import {
  applyDecorators,
  createParamDecorator,
  HttpCode,
  UseInterceptors,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { RequestValidationError } from '../errors/api-error.js';
import { ErrorResponse } from '../errors/error.response.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** 8–128 characters: letters, digits and `. _ : ~ + / = -` (a UUID, a ULID, a base64 token all fit). */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:~+/=-]{8,128}$/;
const INVALID_KEY_MESSAGE =
  'Idempotency-Key must be 8 to 128 letters, digits or . _ : ~ + / = - characters.';

/** The optional `Idempotency-Key` header, validated (422 at `["header", "Idempotency-Key"]`); null when absent. */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | null => {
    const value = context.switchToHttp().getRequest<Request>().headers['idempotency-key'];
    if (value === undefined) return null;
    if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
      throw RequestValidationError.single(
        ['header', IDEMPOTENCY_KEY_HEADER],
        INVALID_KEY_MESSAGE,
        'value_error',
      );
    }
    return value;
  },
);

const IDEMPOTENCY_CONFLICT_DESCRIPTION =
  '`This Idempotency-Key was already used for a different request.`: the key was used within its lifetime ' +
  'for another request (other fields, another photo or another route).';

/** The header's OpenAPI entry, for every route that reads it. */
const ApiIdempotencyKeyHeader = () =>
  ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    description:
      'Optional. A client-chosen key, unique per intended create: repeating the request with the same key ' +
      '(after a timeout, a 503 or a lost connection) answers the original result instead of creating again, ' +
      'for 24 hours (IDEMPOTENCY_KEY_TTL_HOURS). The same key with a different request answers 409.',
    schema: {
      type: 'string',
      minLength: 8,
      maxLength: 128,
      pattern: IDEMPOTENCY_KEY_PATTERN.source,
    },
  });

/**
 * A create from a multipart form (its file part read by `upload`) that honours the `Idempotency-Key` header: 201
 * with `created`, the form's OpenAPI shape, the header and its 409. The handler reads the key with
 * `@IdempotencyKey()`.
 */
export const IdempotentFormCreate = (options: {
  form: Type;
  created: Type;
  upload: Type<NestInterceptor>;
}) =>
  applyDecorators(
    HttpCode(201),
    UseInterceptors(options.upload),
    ApiConsumes('multipart/form-data'),
    ApiBody({ type: options.form }),
    ApiCreatedResponse({
      type: options.created,
      description: 'Created; also the answer to a retry with the same Idempotency-Key and request.',
    }),
    ApiIdempotencyKeyHeader(),
    ApiConflictResponse({ type: ErrorResponse, description: IDEMPOTENCY_CONFLICT_DESCRIPTION }),
  );
