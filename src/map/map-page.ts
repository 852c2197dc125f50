import type { NestExpressApplication } from '@nestjs/platform-express';
import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppConfig } from '../config/app-config.js';
import type { StatisticsResponse } from '../statistics/statistics.response.js';

const VIEWS_DIR = fileURLToPath(new URL('./views/', import.meta.url));
const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
/** MapLibre GL JS as npm ships it (ES modules, its worker and stylesheet): no CDN, no build step. */
const MAPLIBRE_DIR = join(
  dirname(createRequire(import.meta.url).resolve('maplibre-gl/package.json')),
  'dist',
);
const MAPLIBRE_FILES = /^\/(maplibre-gl(-worker)?\.mjs|maplibre-gl\.css)$/;

export const MAP_ASSETS = '/assets/map';
export const MAPLIBRE_ASSETS = '/assets/maplibre-gl';
export const TILE_URL = '/api/v1/libraries/tiles/{z}/{x}/{y}.mvt';

/** The footer's links (add a page's link here). */
export const FOOTER_LINKS: { href: string; label: string }[] = [
  { href: '/api/v1/libraries/export/latest.geojson', label: 'Open data (GeoJSON)' },
  { href: '/api/v1/docs', label: 'API documentation' },
  { href: '/api/v1/openapi.json', label: 'OpenAPI document' },
  { href: '/admin', label: 'Staff console' },
];

/** The origin of the base map, which the page's CSP must let MapLibre fetch from; null for none. */
function baseMapOrigin(styleUrl: string | null): string | null {
  if (!styleUrl) return null;
  try {
    return new URL(styleUrl.replace(/[{}]/g, '')).origin;
  } catch {
    return null;
  }
}

/**
 * No inline script or style: the page's script and stylesheets come from this origin. MapLibre 6 starts its worker
 * as a module from the URL next to its own script, on this origin, so `worker-src 'self'` is all it needs (older
 * MapLibre, or one loaded from another origin, builds the worker from a `blob:` URL; neither is allowed here). Tiles,
 * the base map and images come only from here and the base map's origin.
 */
export function mapPageCsp(styleUrl: string | null): string {
  const base = baseMapOrigin(styleUrl);
  const extra = base ? ` ${base}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${extra}`,
    `connect-src 'self'${extra}`,
    "worker-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

export function serveMapAssets(app: NestExpressApplication): void {
  const options = {
    index: false,
    dotfiles: 'deny',
    fallthrough: true,
    maxAge: '1h',
  } as const;
  app.use(MAP_ASSETS, express.static(ASSETS_DIR, options));
  const maplibre = express.static(MAPLIBRE_DIR, options);
  app.use(MAPLIBRE_ASSETS, (req: Request, res: Response, next: NextFunction) => {
    if (MAPLIBRE_FILES.test(req.path)) maplibre(req, res, next);
    else next();
  });
}

/** Renders the public map page (Eta, auto-escaped) with its security headers. */
@Injectable()
export class MapPage {
  private readonly eta = new Eta({ views: VIEWS_DIR, cache: true, autoEscape: true });

  constructor(private readonly config: AppConfig) {}

  render(res: Response, statistics: StatisticsResponse): void {
    const html = this.eta.render('map', {
      styleUrl: this.config.mapStyleUrl ?? '',
      tileUrl: TILE_URL,
      mapAssets: MAP_ASSETS,
      maplibreAssets: MAPLIBRE_ASSETS,
      statistics,
      links: FOOTER_LINKS,
    });
    res.setHeader('Content-Security-Policy', mapPageCsp(this.config.mapStyleUrl));
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cache-Control', 'public, max-age=0, s-maxage=60');
    res.status(200).type('html').send(html);
  }
}
