/**
 * What each route handler validates: the DTO classes it receives through @Query, @Body or @FormBody, and the
 * properties class-validator holds rules for (with whether they must be integers). The OpenAPI test compares them
 * with the document, so the document cannot omit a validated parameter or field unnoticed.
 */
import type { INestApplication } from '@nestjs/common';
import { PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { getMetadataStorage } from 'class-validator';

export interface ValidatedInput {
  operationId: string;
  source: 'query' | 'body';
  fields: { name: string; integer: boolean }[];
}

const QUERY = 4;
const BODY = 3;
const EXCLUDED_CONTROLLER = 'swagger/apiExcludeController';

type Constructor = new (...args: unknown[]) => unknown;

function fieldsOf(dto: Constructor): ValidatedInput['fields'] {
  const rules = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const names = [...new Set(rules.map((rule) => rule.propertyName))];
  return names.map((name) => ({
    name,
    integer: rules.some((rule) => rule.propertyName === name && rule.name === 'isInt'),
  }));
}

export async function validatedInputs(app: INestApplication): Promise<ValidatedInput[]> {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const found: ValidatedInput[] = [];
  for (const wrapper of discovery.getControllers()) {
    if (!wrapper.instance || !wrapper.metatype) continue;
    const excluded = Reflect.getMetadata(EXCLUDED_CONTROLLER, wrapper.metatype) as unknown;
    if (Array.isArray(excluded) ? excluded[0] === true : excluded === true) continue;
    const prototype = Object.getPrototypeOf(wrapper.instance) as object;
    for (const method of scanner.getAllMethodNames(prototype)) {
      const handler = (prototype as Record<string, unknown>)[method] as object;
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, wrapper.metatype, method) ??
        {}) as Record<string, { index: number; data?: unknown }>;
      const types = (Reflect.getMetadata('design:paramtypes', prototype, method) ??
        []) as unknown[];
      for (const [key, arg] of Object.entries(args)) {
        const kind = Number(key.split(':')[0]);
        const source =
          kind === QUERY
            ? 'query'
            : kind === BODY || (key.includes('__customRouteArgs__') && arg.data === 'form')
              ? 'body'
              : null;
        const type = types[arg.index];
        // A whole-DTO argument only (`@Query('name')` of a scalar is a parameter Swagger documents by itself).
        if (!source || (arg.data !== undefined && source === 'query')) continue;
        if (typeof type !== 'function' || [Object, String, Number, Boolean].includes(type as never))
          continue;
        const fields = fieldsOf(type as Constructor);
        if (fields.length)
          found.push({ operationId: `${wrapper.metatype.name}_${method}`, source, fields });
      }
    }
  }
  return found;
}
