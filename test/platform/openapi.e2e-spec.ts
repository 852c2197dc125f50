/**
 * The OpenAPI document is generated from the code, so it is tested on the BUILT app (compiled with the swagger
 * CLI plugin exactly as production runs it), not on the transpiled sources the other suites use.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { validatedInputs } from '../support/validated-inputs.js';
import { useTestSuite } from '../support/suite.js';

const dist = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
}
interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

describe('OpenAPI document', () => {
  // Declared before the suite, so the app closes before its database is dropped.
  afterAll(async () => {
    await app?.close();
  });
  // The database only: this suite builds the app from the compiled output itself.
  const { db } = useTestSuite({ app: false });
  let app: INestApplication;
  let document: {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
  };
  let operations: [string, string, Operation][];
  let handlers: string[];
  let inputs: Awaited<ReturnType<typeof validatedInputs>>;

  beforeAll(async () => {
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
    inputs = await validatedInputs(app);
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
    expect(Object.keys(feed.responses).sort()).toEqual(['200', '304', '422', '429', '500', '503']);
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
    expect(Object.keys(tile.responses).sort()).toEqual([
      '200',
      '204',
      '304',
      '404',
      '422',
      '429',
      '500',
      '503',
    ]);
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

  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref
      ? document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
      : schema;

  /**
   * Derived from the class-validator metadata of the DTOs each handler receives (@Query, @Body, @FormBody), so a
   * field the code validates but the document omits (the plugin not reading a file, a lost decorator) fails here.
   */
  it('documents every query parameter and body field the DTOs validate, integers as integer', () => {
    const byId = new Map(operations.map(([, , operation]) => [operation.operationId, operation]));
    const missing: string[] = [];
    let checked = 0;
    for (const input of inputs) {
      const operation = byId.get(input.operationId);
      if (!operation) continue;
      const documented = new Map<string, Schema | undefined>();
      if (input.source === 'query') {
        for (const parameter of operation.parameters ?? [])
          if (parameter.in === 'query') documented.set(parameter.name, parameter.schema);
      } else {
        const content = Object.values(operation.requestBody?.content ?? {});
        for (const media of content)
          for (const [name, property] of Object.entries(resolve(media.schema)?.properties ?? {}))
            documented.set(name, property);
      }
      for (const field of input.fields) {
        checked += 1;
        const where = `${input.operationId} ${input.source}.${field.name}`;
        if (!documented.has(field.name)) missing.push(`${where}: not documented`);
        else if (field.integer && documented.get(field.name)?.type !== 'integer')
          missing.push(
            `${where}: validated as an integer, documented as ${documented.get(field.name)?.type}`,
          );
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('passes `redocly lint` with the recommended rules (redocly.yaml) without errors', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bookcase-redocly-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const root = new URL('../../', import.meta.url).pathname;
    const lint = spawnSync(
      join(root, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'stylish'],
      { cwd: root, encoding: 'utf8' },
    );
    expect([lint.status, lint.stdout + lint.stderr]).toEqual([
      0,
      expect.stringContaining('Woohoo'),
    ]);
  });
});
