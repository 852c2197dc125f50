import type { INestApplication } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import { OPTIONAL_AUTH_KEY, STAFF_ONLY_KEY } from '../auth/auth.decorators.js';
import { IS_PUBLIC_KEY } from '../auth/public.decorator.js';
import {
  ErrorResponse,
  RateLimitedResponse,
  ServiceUnavailableResponse,
  ValidationErrorResponse,
} from '../errors/error.response.js';
import { PUBLIC_CACHE_KEY } from '../http/cache-control.js';
import { RATE_LIMIT_KEY, type RateLimitSpec } from '../rate-limit/rate-limit.decorator.js';

export const API_VERSION = '1.8.0';

interface RouteFacts {
  isPublic: boolean;
  optionalAuth: boolean;
  staffOnly: boolean;
  rateLimited: boolean;
  publicCache: boolean;
}

type ResponseMap = Record<string, unknown>;
interface Operation {
  responses: ResponseMap;
  parameters?: unknown[];
  requestBody?: unknown;
  security?: Record<string, string[]>[];
  operationId?: string;
}

/** Metadata of `@ApiExcludeController()`: the staff console's HTML pages, which are not part of the API. */
const EXCLUDED_CONTROLLER = 'swagger/apiExcludeController';

/** Path parameters that name an object (whose absence is a 404). */
const OBJECT_KEYS = ['slug', 'id', 'token'];

const ref = (model: { name: string }) => ({
  content: { 'application/json': { schema: { $ref: getSchemaPath(model.name) } } },
});

/** What the guards will do on each route, keyed by the operationId Swagger generates (`Controller_method`). */
function routeFacts(app: INestApplication): Map<string, RouteFacts> {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const reflector = app.get(Reflector);
  const facts = new Map<string, RouteFacts>();
  for (const wrapper of discovery.getControllers()) {
    if (!wrapper.instance || !wrapper.metatype) continue;
    const excluded = Reflect.getMetadata(EXCLUDED_CONTROLLER, wrapper.metatype) as unknown;
    if (Array.isArray(excluded) ? excluded[0] === true : excluded === true) continue;
    const prototype = Object.getPrototypeOf(wrapper.instance) as Record<
      string,
      (...args: unknown[]) => unknown
    >;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const targets = [handler, wrapper.metatype];
      const rateLimit = reflector.getAllAndOverride<RateLimitSpec | 'none' | undefined>(
        RATE_LIMIT_KEY,
        targets,
      );
      facts.set(`${wrapper.metatype.name}_${name}`, {
        isPublic: Boolean(reflector.getAllAndOverride(IS_PUBLIC_KEY, targets)),
        optionalAuth: Boolean(reflector.getAllAndOverride(OPTIONAL_AUTH_KEY, targets)),
        staffOnly: Boolean(reflector.getAllAndOverride(STAFF_ONLY_KEY, targets)),
        rateLimited: rateLimit !== undefined && rateLimit !== 'none',
        publicCache: reflector.getAllAndOverride(PUBLIC_CACHE_KEY, targets) !== undefined,
      });
    }
  }
  return facts;
}

/** `Controller_method` of every route handler the app serves (the operationIds the document must hold). */
export function routeHandlerIds(app: INestApplication): string[] {
  return [...routeFacts(app).keys()];
}

/**
 * The OpenAPI 3 document, generated from the code (controllers, DTOs through the swagger plugin), then completed
 * with the error responses the global guards, pipe and filter produce on every route, so none is undocumented.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Bookcase Directory API')
    .setDescription(
      'Public bookcase directory: accounts, libraries, favourites, community photos, statistics. ' +
        'Every error is `{message, details}`.',
    )
    .setVersion(API_VERSION)
    .addServer('/', 'The server that serves this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [
      ErrorResponse,
      ValidationErrorResponse,
      RateLimitedResponse,
      ServiceUnavailableResponse,
    ],
  });
  const facts = routeFacts(app);
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem) as Operation[]) {
      if (!operation?.responses) continue;
      const route = facts.get(operation.operationId ?? '');
      const add = (status: string, description: string, model: { name: string }) => {
        operation.responses[status] ??= { description, ...ref(model) };
      };
      if (route && (!route.isPublic || route.optionalAuth)) {
        operation.security = route.optionalAuth ? [{ bearer: [] }, {}] : [{ bearer: [] }];
      } else {
        operation.security = [];
      }
      if (route && !route.isPublic && !route.optionalAuth)
        add('401', 'Missing, invalid or expired access token.', ErrorResponse);
      if (route?.staffOnly) add('403', 'Staff access required.', ErrorResponse);
      // An object named in the path (slug, id, device token) may not exist, or not be the caller's to see.
      const parameters = (operation.parameters ?? []) as { in?: string; name?: string }[];
      if (parameters.some((p) => p.in === 'path' && OBJECT_KEYS.includes(p.name ?? '')))
        add('404', 'Not found: no such object, or one the caller may not see.', ErrorResponse);
      if (operation.requestBody) {
        add(
          '400',
          'Malformed body (`Cannot parse request body.`) or a refused value.',
          ErrorResponse,
        );
        add('413', 'Request body too large.', ErrorResponse);
      }
      if (operation.parameters?.length || operation.requestBody) {
        add('422', 'Request validation error.', ValidationErrorResponse);
      }
      if (route?.rateLimited)
        add('429', 'Rate limit exceeded; details.retry_after in seconds.', RateLimitedResponse);
      // A JSON body nested deeper than 32 levels (or otherwise unparsable): refused before validation.
      if (operation.requestBody) add('400', 'Cannot parse request body.', ErrorResponse);
      // A path parameter holding a NUL byte or invalid UTF-8 names nothing.
      if (operation.parameters?.some((p) => (p as { in?: string }).in === 'path'))
        add('404', 'Not found.', ErrorResponse);
      add('500', 'Unexpected error.', ErrorResponse);
      operation.responses['503'] ??= {
        description:
          'The database is unavailable (down, restarting or too slow); repeat after Retry-After seconds.',
        headers: {
          'Retry-After': {
            description: 'Seconds to wait.',
            schema: { type: 'integer', minimum: 1 },
          },
        },
        ...ref(ServiceUnavailableResponse),
      };
      if (route?.publicCache) documentPublicCache(operation.responses);
    }
  }
  nullableForValidators(document.components?.schemas ?? {});
  return document;
}

const header = (description: string, required = false) => ({
  description,
  required,
  schema: { type: 'string' },
});

/** Anonymous reads of a @PublicCache route: shared-cacheable, revalidated with ETag / If-None-Match (304). */
function documentPublicCache(responses: ResponseMap): void {
  const ok = responses['200'] as { headers?: Record<string, unknown> } | undefined;
  if (ok) {
    // Headers a route documents itself (files with their own validators) win.
    ok.headers = {
      'Cache-Control': {
        ...header(
          '`public, max-age=0, s-maxage=N` for anonymous reads; `private, no-store` with a token.',
          true,
        ),
        schema: {
          type: 'string',
          pattern: '^(public, max-age=0, s-maxage=\\d+|private, no-store)$',
        },
      },
      ETag: header('Anonymous reads only: send it back as If-None-Match to revalidate.'),
      Vary: header('`Authorization`.'),
      ...ok.headers,
    };
  }
  responses['304'] ??= {
    description: 'Not modified: the If-None-Match ETag of an anonymous read still matches.',
    headers: { ETag: header('The same ETag.', true) },
  };
}

/**
 * `nullable: true` as OpenAPI 3.0 validators (Ajv) read it: it only widens a `type`, so a nullable `enum` must list
 * `null` itself, and a nullable reference (which @nestjs/swagger writes as `allOf: [$ref]` beside `nullable`) becomes
 * `anyOf: [$ref, null]`. Applied to every schema, so a new nullable field cannot reintroduce the problem.
 */
export function nullableForValidators(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(nullableForValidators);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  for (const value of Object.values(schema)) nullableForValidators(value);
  if (schema.nullable !== true) return;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
  const refs = (schema.allOf ?? (schema.$ref ? [{ $ref: schema.$ref }] : null)) as unknown[] | null;
  if (refs?.length === 1 && !schema.properties) {
    delete schema.allOf;
    delete schema.$ref;
    delete schema.type;
    delete schema.nullable;
    schema.anyOf = [refs[0], { type: 'object', nullable: true, enum: [null] }];
  }
}
