import { Injectable, ValidationPipe, type ArgumentMetadata, type Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import type { ValidationError } from 'class-validator';
import { RequestValidationError, type ValidationErrorItem } from '../errors/api-error.js';
import { plainQueryReader } from './plain-query.js';

/** Marker the `@FormBody()` decorator passes so multipart fields are reported under `form`. */
export const FORM_BODY = 'form';
/** Marker of `@BodyOrForm()`: a JSON body is reported under `body`, a multipart form under `form`. */
export const BODY_OR_FORM = 'body-or-form';
/** Set (non-enumerable) by `@BodyOrForm()` on the fields of a multipart request. */
export const FROM_FORM = Symbol('from-form');

type Location = 'body' | 'query' | 'path' | 'form';

function locationOf(metadata: ArgumentMetadata, value: unknown): Location | null {
  if (metadata.type === 'custom' && metadata.data === BODY_OR_FORM)
    return typeof value === 'object' && value !== null && FROM_FORM in value ? 'form' : 'body';
  switch (metadata.type) {
    case 'body':
      return 'body';
    case 'query':
      return 'query';
    case 'param':
      return 'path';
    case 'custom':
      return metadata.data === FORM_BODY ? 'form' : null;
    default:
      return null;
  }
}

function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

export function flattenValidationErrors(
  errors: ValidationError[],
  prefix: (string | number)[],
): ValidationErrorItem[] {
  return errors.flatMap((error) => {
    const loc = [...prefix, /^\d+$/.test(error.property) ? Number(error.property) : error.property];
    const own = Object.entries(error.constraints ?? {}).map(([constraint, msg]) => ({
      loc,
      msg,
      type: snake(constraint),
    }));
    return [...own, ...flattenValidationErrors(error.children ?? [], loc)];
  });
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

class CollectedValidationErrors extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('validation failed');
  }
}

/**
 * The one validation stack: class-validator DTOs, unknown keys dropped (whitelist), every failure reported as a
 * 422 whose `loc` starts with where the value came from (query, path, body or form).
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: false,
      forbidUnknownValues: false,
      stopAtFirstError: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new CollectedValidationErrors(errors),
    });
  }

  /**
   * Query DTO classes whose empty query (no parameter at all: a list's first page) has passed validation once. An
   * empty query of such a class is then only turned into the DTO (its defaults, static field initialisers, so it
   * validates the same way every time): validating it again cost class-validator about 0.06 ms of Node CPU per
   * default list page at 1M libraries, the largest single item of the list's Node time above the bench ceiling
   * (issue 22, `npm run bench -- --profile`).
   */
  private readonly validEmptyQueries = new WeakSet<Type>();

  /**
   * A query of a DTO class with its own reader of plainly valid queries (plain-query.ts), as that reader gives it;
   * null for any other query, which the whole stack validates (and only it reports errors).
   */
  protected plainQuery(value: unknown, metadata: ArgumentMetadata): object | null {
    if (typeof value !== 'object' || value === null) return null;
    const read = plainQueryReader(metadata.metatype);
    return read ? read(value as Record<string, unknown>) : null;
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const location = locationOf(metadata, value);
    if (!location) return value;
    const plain = location === 'query' ? this.plainQuery(value, metadata) : null;
    if (plain) return plain;
    const emptyQuery = location === 'query' && isEmptyObject(value) ? metadata.metatype : undefined;
    if (emptyQuery && this.validEmptyQueries.has(emptyQuery))
      return plainToInstance(emptyQuery, {}, this.transformOptions);
    const target = metadata.type === 'custom' ? { ...metadata, type: 'body' as const } : metadata;
    try {
      const transformed: unknown = await super.transform(value ?? {}, target);
      if (emptyQuery && transformed instanceof emptyQuery) this.validEmptyQueries.add(emptyQuery);
      return transformed;
    } catch (error) {
      if (error instanceof CollectedValidationErrors) {
        const prefix =
          location === 'path' && metadata.data ? [location, metadata.data] : [location];
        throw new RequestValidationError(flattenValidationErrors(error.errors, prefix));
      }
      throw error;
    }
  }
}
