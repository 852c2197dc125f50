import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduledTasksRepository } from '../common/jobs/scheduled-tasks.repository.js';
import { ExportController } from './export.controller.js';
import { ExportJob } from './export.job.js';
import { DEFAULT_EXPORT_OPTIONS, EXPORT_OPTIONS, type ExportOptions } from './export.options.js';
import { ExportRepository } from './export.repository.js';
import { ExportService } from './export.service.js';

/** The open-data export: its durable job, its files in media storage and the routes that serve them. */
@Module({})
export class ExportModule {
  /** The CLI passes `{autoStart: false}`: it runs the export on demand and never polls. */
  static forRoot(options: Partial<ExportOptions> = {}): DynamicModule {
    return {
      module: ExportModule,
      controllers: [ExportController],
      providers: [
        { provide: EXPORT_OPTIONS, useValue: { ...DEFAULT_EXPORT_OPTIONS, ...options } },
        ScheduledTasksRepository,
        ExportRepository,
        ExportService,
        ExportJob,
      ],
      exports: [ExportJob, ExportService],
    };
  }
}
