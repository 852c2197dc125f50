import { Module } from '@nestjs/common';
import { StatisticsController } from './statistics.controller.js';
import { StatisticsRepository } from './statistics.repository.js';
import { StatisticsService } from './statistics.service.js';

@Module({
  controllers: [StatisticsController],
  providers: [StatisticsRepository, StatisticsService],
  exports: [StatisticsService],
})
export class StatisticsModule {}
