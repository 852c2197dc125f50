/**
 * The OpenAPI document exactly as the BUILT app serves it (compiled with the swagger CLI plugin, as production
 * runs): the app is booted from dist/ on a database of its own and `/api/v1/openapi.json` is read over HTTP.
 * Used by the e2e global setup (the response-validation harness of test/support/app.ts reads the file it writes).
 */
import { join } from 'node:path';

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
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address();
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`openapi.json answered ${response.status}`);
    return await response.json();
  } finally {
    await app.close();
  }
}
