import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { ApiError } from '../common/errors/api-error.js';
import { ErrorResponse } from '../common/errors/error.response.js';
import { NoRateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { Public } from '../common/auth/public.decorator.js';
import { REDIS, type RedisClient } from '../common/redis/redis.module.js';
import { HealthResponse } from './health.response.js';

@ApiTags('health')
@Public()
@NoRateLimit()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  /** Liveness: the process answers. */
  @Get('health')
  @ApiOkResponse({ type: HealthResponse })
  live(): HealthResponse {
    return { status: 'ok', checks: {} };
  }

  /** Readiness: the database (and Redis, when configured) answer. */
  @Get('ready')
  @ApiOkResponse({ type: HealthResponse })
  @ApiServiceUnavailableResponse({ type: ErrorResponse })
  async ready(): Promise<HealthResponse> {
    try {
      const result = await this.health.check([
        () => this.database.pingCheck('database', { timeout: 3000 }),
        ...(this.redis ? [() => this.redisCheck()] : []),
      ]);
      return {
        status: 'ok',
        checks: Object.fromEntries(Object.keys(result.details).map((key) => [key, 'up'])),
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

  private async redisCheck() {
    const indicator = this.indicators.check('redis');
    try {
      const pong = await Promise.race([
        this.redis!.ping(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('timeout')), 2000).unref(),
        ),
      ]);
      return pong === 'PONG' ? indicator.up() : indicator.down();
    } catch {
      return indicator.down();
    }
  }
}
