import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ApiError } from '../common/errors/api-error.js';
import { ErrorResponse } from '../common/errors/error.response.js';
import { NoRateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { Public } from '../common/auth/public.decorator.js';
import { RedisBreaker } from '../common/redis/redis-breaker.js';
import { HealthResponse } from './health.response.js';

@ApiTags('health')
@Public()
@NoRateLimit()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly redis: RedisBreaker,
  ) {}

  /** Liveness: the process answers. */
  @Get('health')
  @ApiOkResponse({ type: HealthResponse })
  live(): HealthResponse {
    return { status: 'ok', checks: {} };
  }

  /**
   * Readiness: the database answers. Redis, when configured, is reported (`up` or `degraded`) but never makes the
   * instance unready: every use of it has a fallback.
   */
  @Get('ready')
  @ApiOkResponse({ type: HealthResponse })
  @ApiServiceUnavailableResponse({ type: ErrorResponse })
  async ready(): Promise<HealthResponse> {
    const redis = this.redis.ping();
    try {
      const result = await this.health.check([
        () => this.database.pingCheck('database', { timeout: 3000 }),
      ]);
      const redisState = await redis;
      return {
        status: 'ok',
        checks: {
          ...Object.fromEntries(Object.keys(result.details).map((key) => [key, 'up'])),
          ...(redisState === 'off' ? {} : { redis: redisState }),
        },
      };
    } catch (error) {
      const details =
        (error as { response?: { details?: Record<string, { status: string }> } }).response
          ?.details ?? {};
      const checks = Object.fromEntries(
        Object.entries(details).map(([key, value]) => [key, value.status]),
      );
      throw new ApiError(503, 'Service unavailable.', { checks });
    }
  }
}
