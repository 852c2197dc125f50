/**
 * The OpenAPI document exactly as the BUILT app serves it (compiled with the swagger CLI plugin, as production
 * runs): the app is booted from dist/ on a database of its own and `/api/v1/openapi.json` is read over HTTP.
 * Used by the e2e global setup (the response-validation harness of test/support/app.ts reads the file it writes).
 */
import { join } from 'node:path';
import request from 'supertest';

const dist = new URL('../../dist/', import.meta.url).pathname;

export async function servedDocument(databaseUrl) {
  const { NestFactory } = await import('@nestjs/core');
  const { AppModule } = await import(join(dist, 'src/app.module.js'));
  const { configureApp, NEST_APP_OPTIONS } = await import(join(dist, 'src/app.setup.js'));
  const { loadConfig } = await import(join(dist, 'src/config/app-config.js'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'x'.repeat(40),
    LOG_LEVEL: 'silent',
  });
  const app = await NestFactory.create(
    AppModule.forRoot({ config, databaseUrl, runMigrations: false }),
    { ...NEST_APP_OPTIONS, logger: false },
  );
  try {
    await configureApp(app, config);
    const response = await request(app.getHttpServer()).get('/api/v1/openapi.json');
    if (response.status !== 200) throw new Error(`openapi.json answered ${response.status}`);
    return response.body;
  } finally {
    await app.close();
  }
}
