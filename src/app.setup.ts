import { RequestMethod, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { PINO, PinoNestLogger, requestLogger } from './common/logging/logging.module.js';
import { serveMedia } from './common/media/serve-media.js';
import type { AppConfig } from './config/app-config.js';

export const API_PREFIX = 'api/v1';
export const API_VERSION = '1.8.0';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Bookcase Directory API')
    .setDescription('Public bookcase directory: accounts, libraries, favourites, community photos, statistics.')
    .setVersion(API_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Everything about the HTTP surface that is not a module: proxy trust, body limits, prefix, docs, media. */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  const logger = app.get<Logger>(PINO);
  app.useLogger(new PinoNestLogger(logger));
  app.use(requestLogger(logger));
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);
  app.disable('x-powered-by');
  app.useBodyParser('json', { limit: '1mb' });
  app.useBodyParser('urlencoded', { limit: '1mb', extended: false });
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: 'health', method: RequestMethod.GET },
      { path: 'ready', method: RequestMethod.GET },
    ],
  });
  serveMedia(app, config.mediaRoot);
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup(`${API_PREFIX}/docs`, app, document, {
    jsonDocumentUrl: `${API_PREFIX}/openapi.json`,
    raw: ['json'],
  });
}
