import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator.js';
import { PublicCache } from '../common/http/cache-control.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { StatisticsResponse } from './statistics.response.js';
import { StatisticsService } from './statistics.service.js';

@ApiTags('statistics')
@Controller('statistics')
export class StatisticsController {
  constructor(private readonly statistics: StatisticsService) {}

  /** Totals, top countries and cumulative growth of approved libraries (cached for 5 minutes). */
  @Get()
  @Public()
  @RateLimit('read')
  @PublicCache(60)
  @ApiOkResponse({ type: StatisticsResponse })
  get(): Promise<StatisticsResponse> {
    return this.statistics.get();
  }
}
