import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator.js';
import { PublicCache } from '../common/http/cache-control.js';
import { StatisticsResponse } from './statistics.response.js';
import { StatisticsService } from './statistics.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

@ApiTags('statistics')
@Controller('statistics')
export class StatisticsController {
  constructor(private readonly statistics: StatisticsService) {}

  /** Totals, top countries and cumulative growth of approved libraries (cached for 5 minutes). */
  @ReadRoute(StatisticsResponse)
  @Public()
  @PublicCache(60)
  get(): Promise<StatisticsResponse> {
    return this.statistics.get();
  }
}
