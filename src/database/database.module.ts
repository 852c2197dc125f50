import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  buildDataSourceOptions,
  DEFAULT_DATABASE_TIMEOUTS,
  type DatabaseTimeouts,
} from './data-source-options.js';
import { migrateDatabase } from './migrate-locked.js';
import { PreparedReader } from './prepared-reader.js';
import { Database } from './database.js';

/** The connection (TypeORM's DataSource, pooled) and `Database`, the `Sql` every repository runs on. */
@Global()
@Module({})
export class DatabaseModule {
  /**
   * Applies pending migrations before the app serves anything, on a connection of their own without the app's
   * timeouts and under an advisory lock (migrateDatabase): instances starting together migrate once, and one that
   * starts while another migrates waits for it. Then connects the app's pool, with `timeouts`.
   */
  static forRoot(
    url: string,
    poolSize: number,
    runMigrations = true,
    timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS,
  ): DynamicModule {
    return {
      module: DatabaseModule,
      // Every repository runs on `Database` and may read with prepared statements on the same pool.
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...buildDataSourceOptions(url, poolSize, timeouts),
            migrationsRun: false,
            retryAttempts: 2,
            retryDelay: 1000,
          }),
          dataSourceFactory: async (options) => {
            if (runMigrations) await migrateDatabase(url, timeouts);
            return new DataSource(options!).initialize();
          },
        }),
      ],
      providers: [Database, PreparedReader],
      exports: [Database, PreparedReader],
    };
  }
}
