import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ModuleMetadata } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { DestinationStream } from 'pino';
import { AppModule } from '../../src/app.module.js';
import { configureApp, NEST_APP_OPTIONS } from '../../src/app.setup.js';
import { Clock } from '../../src/common/clock.js';
import { AppConfig, loadConfig } from '../../src/config/app-config.js';
import { FakeClock } from './clock.js';
import { checkResponsesAgainstDocument } from './response-contract.js';
import { startS3Server, testMediaOnS3, type TestS3Server } from './s3-server.js';

export const TEST_JWT_SECRET = 'test-secret-0123456789-0123456789-0123456789';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  clock: FakeClock;
  /** The loopback S3 server and bucket when the app stores media there (TEST_MEDIA_STORAGE=s3). */
  s3: { server: TestS3Server; bucket: string } | null;
  /** The Express server, for supertest. */
  http: ReturnType<NestExpressApplication['getHttpServer']>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  databaseUrl: string;
  env?: Record<string, string>;
  /** Use Redis (TEST_REDIS_URL) for shared state; with a key prefix of its own unless one is given. */
  redis?: boolean;
  clock?: FakeClock;
  imports?: ModuleMetadata['imports'];
  logDestination?: DestinationStream;
  /** Providers replaced by values (e.g. a worker's tuning with background polling off). */
  overrides?: { provide: unknown; useValue: unknown }[];
}

/** The real application on a real database, configured exactly as main.ts does, with a fake clock. */
export async function createTestApp(options: TestAppOptions): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bookcase-test-'));
  // The media suites' second run: every app that does not choose its own storage keeps its media on s3rver.
  let s3: TestApp['s3'] = null;
  if (testMediaOnS3 && !options.env?.MEDIA_STORAGE && !options.env?.MEDIA_ROOT) {
    const server = await startS3Server();
    s3 = { server, bucket: await server.createBucket() };
  }
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: options.databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: dataDir,
    LOG_LEVEL: options.logDestination ? 'info' : 'silent',
    // No background export run in suites that do not test it (export suites set an interval and drive the job).
    EXPORT_INTERVAL: 'off',
    // No background notification worker either (the notification suites drive it with runOnce()).
    NOTIFICATIONS_POLL_INTERVAL: 'off',
    // The embedded server runs one session: one connection per app, as `npm start` uses it.
    ...(process.env.TEST_DB_MODE === 'embedded'
      ? {
          DATABASE_POOL_SIZE: '1',
          DATABASE_STATEMENT_TIMEOUT_SECONDS: '0',
          DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS: '0',
        }
      : {}),
    ...(options.redis
      ? { REDIS_URL: requireRedisUrl(), REDIS_KEY_PREFIX: `t${randomBytes(6).toString('hex')}:` }
      : {}),
    ...(s3 ? s3.server.env(s3.bucket) : {}),
    ...options.env,
  };
  const config = loadConfig(env);
  const clock = options.clock ?? new FakeClock();
  let builder = Test.createTestingModule({
    imports: [
      AppModule.forRoot({
        config,
        databaseUrl: options.databaseUrl,
        runMigrations: false,
        logDestination: options.logDestination,
      }),
      ...(options.imports ?? []),
    ],
  })
    .overrideProvider(Clock)
    .useValue(clock);
  for (const override of options.overrides ?? []) {
    builder = builder.overrideProvider(override.provide).useValue(override.useValue);
  }
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({
    ...NEST_APP_OPTIONS,
    bufferLogs: false,
    logger: false,
  });
  checkResponsesAgainstDocument(app);
  await configureApp(app, config);
  return {
    app,
    config,
    clock,
    s3,
    http: app.getHttpServer(),
    close: async () => {
      await app.close();
      await s3?.server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function requireRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error('Redis is not available for this test (TEST_REDIS_URL unset)');
  return url;
}

/** `describe` for suites that need Redis: skipped, visibly, where no Redis runs (CI requires it). */
export const describeWithRedis = process.env.TEST_REDIS_URL ? describe : describe.skip;

/**
 * For tests of behaviour that belongs to a PostgreSQL server: concurrent sessions (races, row locks) and dropping a
 * database under a running app. The embedded PGlite database runs one session, so these are skipped there (visibly);
 * CI always runs them against PostgreSQL.
 */
export const itWithDatabaseServer = process.env.TEST_DB_MODE === 'embedded' ? it.skip : it;
export const describeWithDatabaseServer =
  process.env.TEST_DB_MODE === 'embedded' ? describe.skip : describe;
