/**
 * The app's routes read from Nest's own metadata (controllers found by DiscoveryService, paths and methods from the
 * route decorators, access from @Public / @StaffOnly / @OptionalAuth), so tables of "every protected route" are
 * generated: a route added tomorrow is in them without anyone listing it.
 */
import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import type { INestApplication } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { API_PREFIX } from '../../src/app.setup.js';
import { OPTIONAL_AUTH_KEY, STAFF_ONLY_KEY } from '../../src/common/auth/auth.decorators.js';
import { IS_PUBLIC_KEY } from '../../src/common/auth/public.decorator.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface AppRoute {
  /** `POST /api/v1/admin/map-contributions/batch-confirm`, with `{param}` placeholders. */
  name: string;
  method: HttpMethod;
  /** The Nest path pattern (`:slug` parameters), global prefix included unless the route is excluded from it. */
  pattern: string;
  handler: string;
  isPublic: boolean;
  staffOnly: boolean;
  optionalAuth: boolean;
  /** Names of the route's own guards (`@UseGuards`), e.g. the console's session guard. */
  guards: string[];
}

const METHODS: Partial<Record<RequestMethod, HttpMethod>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.DELETE]: 'delete',
};

const asList = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value ?? '']).map((part) => String(part));

function join(...parts: string[]): string {
  const path = parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
  return `/${path}`;
}

interface ExpressLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** `get /api/v1/auth/me` for every route Express actually serves. */
function servedRoutes(app: INestApplication): Set<string> {
  const express = app.getHttpAdapter().getInstance() as { router: { stack: ExpressLayer[] } };
  const served = new Set<string>();
  for (const layer of express.router.stack) {
    if (!layer.route) continue;
    for (const [method, on] of Object.entries(layer.route.methods))
      if (on) served.add(`${method} ${layer.route.path}`);
  }
  return served;
}

/**
 * Every route handler of `app`, at the path Express serves it: under the API prefix, or outside it where
 * app.setup excludes the route (the console, health, the map page). A route Express does not serve is an error.
 */
export function appRoutes(app: INestApplication): AppRoute[] {
  const served = servedRoutes(app);
  const discovery = app.get(DiscoveryService, { strict: false });
  const scanner = app.get(MetadataScanner, { strict: false });
  const reflector = app.get(Reflector, { strict: false });
  const routes: AppRoute[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as object | undefined;
    const metatype = wrapper.metatype as (new (...args: never[]) => object) | null;
    if (!instance || !metatype) continue;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as (...args: unknown[]) => unknown;
      const handlerPath = Reflect.getMetadata(PATH_METADATA, handler) as unknown;
      if (handlerPath === undefined) continue;
      const method = METHODS[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      if (!method) continue;
      const flag = (key: string) =>
        reflector.getAllAndOverride<boolean | undefined>(key, [handler, metatype]) === true;
      const guards = [
        ...((Reflect.getMetadata(GUARDS_METADATA, metatype) as { name: string }[] | undefined) ??
          []),
        ...((Reflect.getMetadata(GUARDS_METADATA, handler) as { name: string }[] | undefined) ??
          []),
      ].map((guard) => guard.name);
      const isPublic = flag(IS_PUBLIC_KEY);
      for (const controllerPath of asList(Reflect.getMetadata(PATH_METADATA, metatype))) {
        for (const path of asList(handlerPath)) {
          const pattern = [join(API_PREFIX, controllerPath, path), join(controllerPath, path)].find(
            (candidate) => served.has(`${method} ${candidate}`),
          );
          if (!pattern)
            throw new Error(
              `${metatype.name}.${name}: no served route for ${controllerPath}/${path}`,
            );
          routes.push({
            name: `${method.toUpperCase()} ${pattern.replace(/:(\w+)/g, '{$1}')}`,
            method,
            pattern,
            handler: `${metatype.name}.${name}`,
            isPublic,
            staffOnly: flag(STAFF_ONLY_KEY),
            optionalAuth: flag(OPTIONAL_AUTH_KEY),
            guards,
          });
        }
      }
    }
  }
  return routes.sort((a, b) => a.name.localeCompare(b.name));
}

/** A concrete URL for a pattern: every `:param` filled with a value any parameter accepts syntactically. */
export function sampleUrl(pattern: string): string {
  return pattern.replace(/:(\w+)(\([^)]*\))?/g, (_match, param: string) =>
    /id$|^[xyz]$/i.test(param) ? '1' : `sample-${param}`,
  );
}
