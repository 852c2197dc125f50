import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/auth/public.decorator.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { StatisticsService } from '../statistics/statistics.service.js';
import { MapPage } from './map-page.js';

/** The public map at `/` (outside the API prefix; not part of the OpenAPI document). */
@ApiExcludeController()
@Controller()
export class MapPageController {
  constructor(
    private readonly page: MapPage,
    private readonly statistics: StatisticsService,
  ) {}

  @Get()
  @Public()
  @RateLimit('map')
  async show(@Res() res: Response): Promise<void> {
    this.page.render(res, await this.statistics.get());
  }
}

/** Page paths served without the API prefix. */
export const MAP_PAGE_PATHS = ['/'];
