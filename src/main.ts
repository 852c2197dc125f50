import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp, NEST_APP_OPTIONS } from './app.setup.js';
import { AppConfig, ConfigError, loadConfig } from './config/app-config.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './database/embedded-database.js';

async function bootstrap(): Promise<void> {
  let config = loadConfig();
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.database.url;
  if (!databaseUrl) {
    process.stdout.write(`No DATABASE_URL: starting the embedded database in ${config.dataDir}\n`);
    embedded = await startEmbeddedDatabase(config.dataDir);
    databaseUrl = embedded.url;
    // PGlite runs a single session; one connection keeps requests from interleaving protocol messages in it.
    // Its single-user server takes no per-session timeouts.
    config = new AppConfig({
      ...config,
      database: {
        ...config.database,
        poolSize: 1,
        statementTimeoutSeconds: 0,
        idleInTransactionTimeoutSeconds: 0,
      },
    });
  }

  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ config, databaseUrl }),
    {
      ...NEST_APP_OPTIONS,
      bufferLogs: true,
    },
  );
  await configureApp(app, config);
  await app.listen(config.port, config.host);
  process.stdout.write(
    `Bookcase Directory listening on http://${config.host}:${config.port}/api/v1/\n`,
  );

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`${signal}: finishing in-flight requests\n`);
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    await app.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
