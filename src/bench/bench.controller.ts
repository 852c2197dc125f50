import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { PreparedReader } from '../database/prepared-reader.js';
import { ApprovedListRepository } from '../libraries/approved-list.repository.js';
import {
  CapturedStatementsResponse,
  CeilingItemResponse,
  MemoStatsResponse,
} from './bench.response.js';

/** How many reads a capture records at most. */
export const CAPTURE_LIMIT = 1000;

/** 20 fixed items (about 6.7 KB of JSON), built once: the response never touches the database. */
export const CEILING_ITEMS: readonly CeilingItemResponse[] = Array.from(
  { length: 20 },
  (_, index) => ({
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
  }),
);

/**
 * Routes for `npm run bench` only, registered only when BENCH_CEILING_ROUTE=true (never in production: the capture
 * shows other requests' SQL parameters). The framework's ceiling (issue 7): the same guards, interceptors and
 * serialisation as every route, no database. The list memo's counters and a capture of the SQL that requests read
 * (issue 22): the bench reports hit rates and replays each scenario's statements alone with pgbench.
 */
@ApiTags('bench')
@Controller('bench')
export class BenchController {
  constructor(
    private readonly reader: PreparedReader,
    private readonly approvedList: ApprovedListRepository,
  ) {}

  /** A fixed 20-item list without any database access (benchmark baseline). */
  @Get('ceiling')
  @Public()
  @RateLimit('read')
  @ApiOkResponse({ type: [CeilingItemResponse] })
  ceiling(): readonly CeilingItemResponse[] {
    return CEILING_ITEMS;
  }

  /** The list memo's lookups since start, per kind (benchmark only). */
  @Get('memo')
  @Public()
  @RateLimit('read')
  @ApiOkResponse({ type: MemoStatsResponse })
  memo(): MemoStatsResponse {
    const stats = this.approvedList.memoStats();
    return { items: Object.entries(stats).map(([kind, counts]) => ({ kind, ...counts })) };
  }

  /** Starts recording the reads of the following requests (at most CAPTURE_LIMIT; benchmark only). */
  @Post('capture')
  @Public()
  @RateLimit('read')
  @HttpCode(204)
  @ApiNoContentResponse()
  startCapture(): void {
    this.reader.startCapture(CAPTURE_LIMIT);
  }

  /** The reads recorded since the capture started, in order; recording stops (benchmark only). */
  @Get('capture')
  @Public()
  @RateLimit('read')
  @ApiOkResponse({ type: CapturedStatementsResponse })
  takeCapture(): CapturedStatementsResponse {
    return { items: this.reader.takeCapture() };
  }
}
