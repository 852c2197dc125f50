import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { buildDataSourceOptions } from './data-source-options.js';

@Module({})
export class DatabaseModule {
  /** Connects to `url` and applies pending migrations before the app serves anything. */
  static forRoot(url: string, poolSize: number, runMigrations = true): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...buildDataSourceOptions(url, poolSize),
          migrationsRun: runMigrations,
          retryAttempts: 2,
          retryDelay: 1000,
        }),
      ],
    };
  }
}
