import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { CeilingItemResponse } from './bench.response.js';

/** 20 fixed items (about 6.7 KB of JSON), built once: the response never touches the database. */
const CEILING_ITEMS: readonly CeilingItemResponse[] = Array.from({ length: 20 }, (_, index) => ({
  id: index + 1,
  slug: `berlin-kastanienallee-${index + 1}`,
  name: `Bücherschrank Kastanienallee ${index + 1}`,
  description: 'Ein offener Bücherschrank mit Romanen, Kinderbüchern und Sachbüchern.',
  address: `Kastanienallee ${index + 1}`,
  city: 'Berlin',
  country: 'DE',
  postal_code: '10435',
  latitude: Number((52.5386 + index / 1000).toFixed(4)),
  longitude: Number((13.4102 + index / 1000).toFixed(4)),
  created_at: '2026-01-01T00:00:00.000Z',
}));

/**
 * The framework's ceiling for `npm run bench` (issue 7): the same guards, interceptors and serialisation as every
 * route, no database. Registered only when BENCH_CEILING_ROUTE=true.
 */
@ApiTags('bench')
@Controller('bench')
export class BenchController {
  /** A fixed 20-item list without any database access (benchmark baseline). */
  @Get('ceiling')
  @Public()
  @RateLimit('read')
  @ApiOkResponse({ type: [CeilingItemResponse] })
  ceiling(): readonly CeilingItemResponse[] {
    return CEILING_ITEMS;
  }
}
