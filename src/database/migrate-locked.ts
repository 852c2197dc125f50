import { Logger } from '@nestjs/common';
import { MigrationExecutor, type DataSource, type Migration } from 'typeorm';

/** pg_advisory_lock key held while migrations run: one instance migrates, the others wait for it. */
export const MIGRATION_LOCK_KEY = 0x6d696772; // "migr"

const logger = new Logger('Migrations');

/**
 * Applies pending migrations holding a session advisory lock on the connection that runs them, so N instances
 * starting together never race: the first migrates, the others wait for the lock and then find nothing pending.
 * Each migration runs in its own transaction (migrationsTransactionMode 'each'). One connection is used throughout,
 * which the embedded database's pool of one allows.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<Migration[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
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
    await runner.release();
  }
}
