import { Logger } from '@nestjs/common';
import { DataSource, MigrationExecutor, type Migration } from 'typeorm';
import { buildDataSourceOptions, type DatabaseTimeouts } from './data-source-options.js';

/** pg_advisory_lock key held while migrations run: one instance migrates, the others wait for it. */
export const MIGRATION_LOCK_KEY = 0x6d696772; // "migr"

/**
 * The server's limits that would cut a migration (or an instance waiting for another's) part way, set to 0 (none)
 * for the migrating session: whatever the role, the database or postgresql.conf configure. At a million libraries
 * some migrations build indexes CONCURRENTLY or fill tables for 10–22 minutes, and wait for locks meanwhile.
 */
const UNLIMITED_SETTINGS = [
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'idle_session_timeout',
];

const logger = new Logger('Migrations');

/**
 * Applies pending migrations on a connection of their own, opened for them and closed after: without the app's
 * statement timeout, idle-in-transaction timeout and client-side query timeout (runMigrationsLocked lifts the
 * server's own), so a long migration completes while the app's pool keeps its limits. `timeouts` are the app's:
 * only how long to wait for the connection is kept.
 */
export async function migrateDatabase(
  url: string,
  timeouts: DatabaseTimeouts,
): Promise<Migration[]> {
  const dataSource = await new DataSource(
    buildDataSourceOptions(url, 1, {
      ...timeouts,
      statementTimeoutSeconds: 0,
      idleInTransactionTimeoutSeconds: 0,
      queryTimeoutSeconds: 0,
    }),
  ).initialize();
  try {
    return await runMigrationsLocked(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Applies pending migrations holding a session advisory lock on the connection that runs them, so N instances
 * starting together never race: the first migrates, the others wait for the lock and then find nothing pending.
 * Each migration runs in its own transaction (migrationsTransactionMode 'each'). One connection is used throughout,
 * which the embedded database's pool of one allows. The session's server-side limits (UNLIMITED_SETTINGS) are lifted
 * while it migrates or waits, and restored before the connection goes back to its pool.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<Migration[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    // Only the settings this server has (idle_session_timeout is PostgreSQL 14+).
    const rows = (await runner.query(
      `SELECT name, set_config(name, '0', false) FROM pg_settings WHERE name = ANY($1)`,
      [UNLIMITED_SETTINGS],
    )) as { name: string }[];
    const settings = rows.map((row) => row.name);
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        const executor = new MigrationExecutor(dataSource, runner);
        executor.transaction = 'each';
        const applied = await executor.executePendingMigrations();
        if (applied.length) logger.log(`applied ${applied.length} migration(s)`);
        return applied;
      } finally {
        await runner
          .query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
          .catch(() => undefined);
      }
    } finally {
      for (const name of settings) await runner.query(`RESET ${name}`).catch(() => undefined);
    }
  } finally {
    await runner.release();
  }
}
