/**
 * The OpenAPI document is generated from the code, so it is tested on the BUILT app (compiled with the swagger
 * CLI plugin exactly as production runs it), not on the transpiled sources the other suites use.
 */
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const dist = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  parameters?: unknown[];
  requestBody?: unknown;
}

describe('OpenAPI document', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let document: {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };
  let operations: [string, string, Operation][];
  let handlers: string[];

  beforeAll(async () => {
    db = await createTestDatabase();
    const { AppModule } = await import(dist('app.module.js'));
    const { configureApp, NEST_APP_OPTIONS } = await import(dist('app.setup.js'));
    const { loadConfig } = await import(dist('config/app-config.js'));
    const { routeHandlerIds } = await import(dist('common/openapi/openapi.js'));
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: db.url,
      JWT_SECRET: 'x'.repeat(40),
      LOG_LEVEL: 'silent',
    });
    app = await NestFactory.create(
      AppModule.forRoot({ config, databaseUrl: db.url, runMigrations: false }),
      { ...NEST_APP_OPTIONS, logger: false },
    );
    await configureApp(app, config);
    const res = await request(app.getHttpServer()).get('/api/v1/openapi.json').expect(200);
    document = res.body;
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(
        ([method, operation]) => [path, method, operation] as [string, string, Operation],
      ),
    );
    handlers = routeHandlerIds(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('is OpenAPI 3 and served with the Swagger UI', async () => {
    expect(document.openapi).toMatch(/^3\./);
    const ui = await request(app.getHttpServer()).get('/api/v1/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger-ui');
  });

  it('documents every route the app serves', () => {
    const documented = new Set(operations.map(([, , operation]) => operation.operationId));
    expect(handlers.length).toBeGreaterThan(0);
    expect(handlers.filter((id) => !documented.has(id))).toEqual([]);
  });

  it('gives every operation a success response with a schema (or an empty 204)', () => {
    const lacking = operations
      .filter(([, , operation]) => {
        const success = Object.entries(operation.responses).filter(([status]) =>
          /^2\d\d$/.test(status),
        );
        if (success.length === 0) return true;
        return !success.every(
          ([status, response]) =>
            status === '204' ||
            // JSON for the API; the open-data files are GeoJSON and gzip, each with its own media type.
            Object.values(response.content ?? {}).some((media) => Boolean(media.schema)),
        );
      })
      .map(([path, method]) => `${method.toUpperCase()} ${path}`);
    expect(lacking).toEqual([]);
  });

  it('documents the error envelope on every operation, and 422 wherever input is validated', () => {
    for (const [path, method, operation] of operations) {
      const where = `${method.toUpperCase()} ${path}`;
      expect([where, Boolean(operation.responses['500'])]).toEqual([where, true]);
      if (operation.parameters?.length || operation.requestBody) {
        expect([where, Boolean(operation.responses['422'])]).toEqual([where, true]);
      }
    }
    expect(document.components.schemas).toHaveProperty('ErrorResponse');
    expect(document.components.schemas).toHaveProperty('ValidationErrorResponse');
  });

  it('documents the map feed (GeoJSON) and the vector tiles (MVT) with every status', () => {
    const feed = document.paths['/api/v1/libraries/map'].get;
    expect(Object.keys(feed.responses).sort()).toEqual(['200', '304', '422', '429', '500']);
    expect(feed.responses['200'].content).toEqual({
      'application/geo+json': { schema: { $ref: '#/components/schemas/MapFeedResponse' } },
    });
    const names = (feed.parameters as { name: string; required?: boolean; schema: unknown }[]).map(
      (p) => p.name,
    );
    expect(names.sort()).toEqual(
      ['bbox', 'city', 'country', 'has_photo', 'postal_code', 'q', 'search', 'zoom'].sort(),
    );
    const tile = document.paths['/api/v1/libraries/tiles/{z}/{x}/{y}.mvt'].get;
    expect(Object.keys(tile.responses).sort()).toEqual(['200', '204', '304', '422', '429', '500']);
    expect(tile.responses['200'].content).toEqual({
      'application/vnd.mapbox-vector-tile': { schema: { type: 'string', format: 'binary' } },
    });
    expect(document.components.schemas).toHaveProperty('MapClusterFeatureResponse');
    expect(document.components.schemas).toHaveProperty('MapLibraryFeatureResponse');
  });

  it('documents 429 on every rate-limited operation', () => {
    const limited = operations.filter(([path]) => path.startsWith('/api/v1/'));
    for (const [path, method, operation] of limited) {
      const where = `${method.toUpperCase()} ${path}`;
      expect([where, Boolean(operation.responses['429'])]).toEqual([where, true]);
    }
  });
});
