import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  buildDataSourceOptions,
  DEFAULT_DATABASE_TIMEOUTS,
  type DatabaseTimeouts,
} from './data-source-options.js';
import { PreparedReader } from './prepared-reader.js';
import { Database } from './database.js';

/** The connection (TypeORM's DataSource, pooled) and `Database`, the `Sql` every repository runs on. */
@Global()
@Module({})
export class DatabaseModule {
  /** Connects to `url` and applies pending migrations before the app serves anything. */
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
        TypeOrmModule.forRoot({
          ...buildDataSourceOptions(url, poolSize, timeouts),
          migrationsRun: runMigrations,
          retryAttempts: 2,
          retryDelay: 1000,
        }),
      ],
      providers: [Database, PreparedReader],
      exports: [Database, PreparedReader],
    };
  }
}
