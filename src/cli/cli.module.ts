import { Module, type DynamicModule } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { MediaModule } from '../common/media/media.module.js';
import { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { ExportModule } from '../export/export.module.js';
import { UsersModule } from '../users/users.module.js';

/** The application context the CLI runs in: data access and services, no HTTP. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        CommonModule,
        DatabaseModule.forRoot(databaseUrl, 4, true),
        MediaModule,
        UsersModule,
        ExportModule.forRoot({ autoStart: false }),
      ],
    };
  }
}
