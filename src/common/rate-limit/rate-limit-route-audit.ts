import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RATE_LIMIT_KEY, type RateLimitSpec } from './rate-limit.decorator.js';

/** Lists every route handler that names no rate-limit tier (nor an explicit @NoRateLimit). */
export function routesWithoutTier(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
): string[] {
  const missing: string[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || !wrapper.metatype) continue;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as (...args: unknown[]) => unknown;
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const spec = reflector.getAllAndOverride<RateLimitSpec | 'none' | undefined>(RATE_LIMIT_KEY, [
        handler,
        wrapper.metatype,
      ]);
      if (spec === undefined) missing.push(`${wrapper.metatype.name}.${name}`);
    }
  }
  return missing;
}

/** Refuses to start an app in which a route was added without choosing its tier. */
@Injectable()
export class RateLimitRouteAudit implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const missing = routesWithoutTier(this.discovery, this.scanner, this.reflector);
    if (missing.length) throw new Error(`Routes without a @RateLimit tier: ${missing.join(', ')}`);
  }
}
