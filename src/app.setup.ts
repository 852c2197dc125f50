import { RequestMethod } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { CONSOLE_PATHS } from './admin/admin.module.js';
import { serveConsoleAssets } from './admin/console-assets.js';
import { MAP_PAGE_PATHS } from './map/map-page.controller.js';
import { serveMapAssets } from './map/map-page.js';
import { RESET_PAGE_PATHS } from './password-reset/reset-password-page.controller.js';
import { AppLogger, PINO, requestLogger } from './common/logging/logging.module.js';
import { answerClientErrors } from './common/http/client-error.js';
import { deferredBodyParsers } from './common/http/deferred-body-parser.js';
import { MediaStorage } from './common/media/media-storage.js';
import { serveMedia } from './common/media/serve-media.js';
import { buildOpenApiDocument } from './common/openapi/openapi.js';
import type { AppConfig } from './config/app-config.js';

export const API_PREFIX = 'api/v1';

/**
 * The Swagger UI page loads its scripts, styles and images from our own origin only; it may not be framed. Its
 * HTML carries inline <style> blocks and style attributes (no inline script), hence 'unsafe-inline' for styles.
 */
export const SWAGGER_UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function swaggerUiHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', SWAGGER_UI_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
}

/** Options every NestFactory.create of this app uses: body parsing is ours (see deferred-body-parser.ts). */
export const NEST_APP_OPTIONS = { bodyParser: false } as const;
/**
 * Everything about the HTTP surface that is not a module: proxy trust, body limits, prefix, docs, media. Ends by
 * initialising the app and adding the fallbacks that must come after every route.
 */
export async function configureApp(app: NestExpressApplication, config: AppConfig): Promise<void> {
  app.useLogger(app.get(AppLogger));
  app.use(requestLogger(app.get<Logger>(PINO)));
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);
  app.disable('x-powered-by');
  app.use(...deferredBodyParsers());
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: 'health', method: RequestMethod.GET },
      { path: 'ready', method: RequestMethod.GET },
      ...CONSOLE_PATHS.map((path) => ({ path, method: RequestMethod.ALL })),
      ...MAP_PAGE_PATHS.map((path) => ({ path, method: RequestMethod.GET })),
      ...RESET_PAGE_PATHS.map((path) => ({ path, method: RequestMethod.ALL })),
    ],
  });
  serveMedia(app, config, app.get(MediaStorage));
  serveConsoleAssets(app);
  serveMapAssets(app);
  app.use(`/${API_PREFIX}/docs`, swaggerUiHeaders);
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup(`${API_PREFIX}/docs`, app, document, {
    jsonDocumentUrl: `${API_PREFIX}/openapi.json`,
    raw: ['json'],
  });
  await app.init();
  answerClientErrors(app.getHttpServer());
  // Nest answers unknown paths under the API prefix itself; everything else (e.g. /media misses) lands here.
  app.use((_req: Request, res: Response) => {
    res
      .status(404)
      .setHeader('Cache-Control', 'private, no-store')
      .json({ message: 'Not found.', details: null });
  });
  app.use(
    (
      error: { status?: number; statusCode?: number },
      _req: Request,
      res: Response,
      next: NextFunction,
    ) => {
      if (res.headersSent) return next(error);
      const status = error.status ?? error.statusCode ?? 500;
      const known = status === 404 || status === 403 || status === 400;
      res
        .status(known ? 404 : 500)
        .setHeader('Cache-Control', 'private, no-store')
        .json(
          known
            ? { message: 'Not found.', details: null }
            : { message: 'Internal server error.', details: null },
        );
    },
  );
}
