import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { SearchShortGrams1767800000000 } from '../../migrations/1767800000000-search-short-grams.js';
import { AppModule } from '../../src/app.module.js';
import { loadConfig } from '../../src/config/app-config.js';
import { buildDataSourceOptions } from '../../src/database/data-source-options.js';
import { Database } from '../../src/database/database.js';
import { MIGRATION_LOCK_KEY, runMigrationsLocked } from '../../src/database/migrate-locked.js';
import { describeWithDatabaseServer, TEST_JWT_SECRET } from '../support/app.js';
import { createTestDatabase, queryRows, type TestDatabase } from '../support/database.js';
import { cleanEnv, runNode } from '../support/processes.js';

const CLI = 'dist/src/cli/main.js';

/** The app's configured limits, tiny: a statement 1 s, the client's wait for an answer 2 s. */
const APP_TIMEOUTS = {
  DATABASE_STATEMENT_TIMEOUT_SECONDS: '1',
  DATABASE_QUERY_TIMEOUT_SECONDS: '2',
};

/** Longer than every limit above and than the database's own (DATABASE_LIMITS). */
const OUTLAST_MS = 2500;

/** What an operator may configure on the database itself: every new session gets these unless it says otherwise. */
const DATABASE_LIMITS = [
  `statement_timeout = '200ms'`,
  `lock_timeout = '200ms'`,
  `idle_in_transaction_session_timeout = '200ms'`,
];

const LAST = new SearchShortGrams1767800000000();

/**
 * A clone of the migrated template with its last migration (1767800000000, a chunked fill and CONCURRENTLY indexes,
 * 20 min at 1M) reverted, so it is pending, and the database's own limits set tiny.
 */
async function databaseWithPendingMigration(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  const dataSource = await new DataSource(buildDataSourceOptions(db.url, 1)).initialize();
  try {
    const runner = dataSource.createQueryRunner();
    await LAST.down(runner);
    await runner.query('DELETE FROM schema_migrations WHERE name = $1', [LAST.name]);
    await runner.release();
  } finally {
    await dataSource.destroy();
  }
  const name = new URL(db.url).pathname.slice(1);
  for (const setting of DATABASE_LIMITS)
    await queryRows(db.url, `ALTER DATABASE ${name} SET ${setting}`);
  return db;
}

/**
 * Runs `start` while a transaction of the test holds `lockSql` (taken first), and ends that transaction once a session
 * of the database has waited for a lock longer than OUTLAST_MS (seen from a connection of its own: inside a
 * transaction pg_stat_activity stays as it was first read), or once `start` settled (failed) before.
 */
async function startWhileLocked<T>(
  url: string,
  lockSql: string,
  start: () => Promise<T>,
): Promise<T> {
  const holder = new pg.Client({ connectionString: url });
  const watcher = new pg.Client({ connectionString: url });
  await Promise.all([holder.connect(), watcher.connect()]);
  try {
    await holder.query(
      'SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0',
    );
    await holder.query('BEGIN');
    await holder.query(lockSql);
    let settled = false;
    const started = start().finally(() => (settled = true));
    started.catch(() => undefined);
    try {
      for (;;) {
        const { rows } = await watcher.query<{ waited: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                          WHERE datname = current_database() AND wait_event_type = 'Lock'
                            AND clock_timestamp() - query_start > $1 * interval '1 ms') AS waited`,
          [OUTLAST_MS],
        );
        if (settled || rows[0].waited) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await holder.query('COMMIT');
    }
    return await started;
  } finally {
    await Promise.all([holder.end(), watcher.end()]);
  }
}

async function migrated(url: string): Promise<boolean> {
  const [row] = await queryRows<{ recorded: boolean; indexed: boolean }>(
    url,
    `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1) AS recorded,
            to_regclass('library_search_triples_trgm_idx') IS NOT NULL AS indexed`,
    [LAST.name],
  );
  return row.recorded && row.indexed;
}

/**
 * Migrations at start and through `npm run cli -- migrate` (brief 22m): at 1M some run 10–22 minutes, so they run
 * without the app's statement timeout and client-side query timeout, and without any statement, lock or idle timeout
 * the database configures, while the app's own queries keep the app's limits. Each migration (or wait) here outlasts
 * every limit by waiting for a lock the test holds.
 */
describeWithDatabaseServer('migrations on a database with configured timeouts', () => {
  let db: TestDatabase | undefined;
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'bookcase-migrate-'));
  });

  afterEach(async () => {
    await db?.drop();
    db = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const env = (url: string) => ({
    NODE_ENV: 'test',
    DATABASE_URL: url,
    JWT_SECRET: TEST_JWT_SECRET,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    EXPORT_INTERVAL: 'off',
    NOTIFICATIONS_POLL_INTERVAL: 'off',
    ...APP_TIMEOUTS,
  });

  /**
   * The app's module started as main.ts starts it (migrations at start) on a database with a pending migration, while
   * the test holds `lockSql` past every limit; then the migration is applied, and `check` runs on the started app.
   */
  async function expectStartMigrates(
    lockSql: string,
    check: (app: INestApplication) => Promise<void> = async () => undefined,
  ): Promise<void> {
    db = await databaseWithPendingMigration();
    const url = db.url;
    const app = await startWhileLocked(url, lockSql, async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          AppModule.forRoot({
            config: loadConfig(env(url)),
            databaseUrl: url,
            runMigrations: true,
          }),
        ],
      }).compile();
      return moduleRef.createNestApplication({ logger: false }).init();
    });
    try {
      expect(await migrated(url)).toBe(true);
      await check(app);
    } finally {
      await app.close();
    }
  }

  it('completes a pending migration at start that outlasts every limit, and the app keeps its own', () =>
    expectStartMigrates('LOCK TABLE libraries IN ACCESS EXCLUSIVE MODE', async (app) => {
      const database = app.get(Database);
      expect(await database.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '1s' }]);
      await expect(database.query('SELECT pg_sleep(1.5)')).rejects.toThrow(
        'canceling statement due to statement timeout',
      );
    }));

  it('starts an instance that waits for another instance migrating longer than every limit', () =>
    // The test's transaction stands for the instance that holds the migration lock.
    expectStartMigrates(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`));

  it('completes a pending migration through `cli migrate` that outlasts every limit', async () => {
    db = await databaseWithPendingMigration();
    const url = db.url;
    const result = await startWhileLocked(
      url,
      'LOCK TABLE libraries IN ACCESS EXCLUSIVE MODE',
      () => runNode(CLI, ['migrate'], cleanEnv(env(url))),
    );
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toMatch(/^Database is up to date \(\d+ migrations applied\)\.$/m);
    expect(await migrated(url)).toBe(true);
  });

  it('gives the connection it migrated on back with its own limits', async () => {
    db = await databaseWithPendingMigration();
    const dataSource = await new DataSource(
      buildDataSourceOptions(db.url, 1, {
        statementTimeoutSeconds: 1,
        idleInTransactionTimeoutSeconds: 60,
        poolWaitSeconds: 10,
        poolIdleSeconds: 300,
        queryTimeoutSeconds: 0,
      }),
    ).initialize();
    try {
      await runMigrationsLocked(dataSource);
      expect(
        await dataSource.query(
          `SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
                  current_setting('idle_in_transaction_session_timeout') AS idle`,
        ),
      ).toEqual([{ statement: '1s', lock: '200ms', idle: '1min' }]);
    } finally {
      await dataSource.destroy();
    }
    expect(await migrated(db.url)).toBe(true);
  });
});
