import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { RedisBreaker } from '../common/redis/redis-breaker.js';
import { AppConfig } from '../config/app-config.js';
import { countryName, flagEmoji } from '../libraries/library.mapper.js';
import type { StatisticsResponse } from './statistics.response.js';
import { StatisticsRepository } from './statistics.repository.js';

export const STATISTICS_TTL_SECONDS = 300;
const DAILY_WINDOW_DAYS = 90;
const DAY_MS = 86_400_000;

/**
 * GET /statistics/: a handful of aggregate queries, cached for five minutes (in Redis when configured, so every
 * instance serves the same figures; in process while Redis fails, and always without it).
 */
@Injectable()
export class StatisticsService {
  private local: { value: StatisticsResponse; expiresAt: number } | null = null;
  private inflight: Promise<StatisticsResponse> | null = null;

  constructor(
    private readonly statistics: StatisticsRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly redis: RedisBreaker,
  ) {}

  private get cacheKey(): string {
    return `${this.config.redisKeyPrefix}statistics:v1`;
  }

  async get(): Promise<StatisticsResponse> {
    const cached = await this.cached();
    if (cached) return cached;
    // Concurrent misses in one process share one computation.
    this.inflight ??= this.computeAndStore().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private cached(): Promise<StatisticsResponse | null> {
    return this.redis.run(
      async (redis) => {
        const text = await redis.get(this.cacheKey);
        return text ? (JSON.parse(text) as StatisticsResponse) : null;
      },
      () => (this.local && this.local.expiresAt > this.clock.now() ? this.local.value : null),
    );
  }

  private async computeAndStore(): Promise<StatisticsResponse> {
    const value = await this.compute();
    await this.redis.run(
      async (redis) => {
        await redis.set(this.cacheKey, JSON.stringify(value), 'EX', STATISTICS_TTL_SECONDS);
      },
      () => {
        this.local = { value, expiresAt: this.clock.now() + STATISTICS_TTL_SECONDS * 1000 };
      },
    );
    return value;
  }

  async compute(): Promise<StatisticsResponse> {
    const now = this.clock.date();
    const totals = await this.statistics.totals();
    const daily =
      !totals.oldest ||
      now.getTime() - new Date(totals.oldest).getTime() <= DAILY_WINDOW_DAYS * DAY_MS;
    const [countries, series] = totals.oldest
      ? await Promise.all([
          this.statistics.topCountries(10),
          this.statistics.cumulativeSeries(daily ? 'day' : 'month', now),
        ])
      : [[], []];
    return {
      total_approved: totals.total_approved,
      total_with_image: totals.total_with_image,
      top_countries: countries.map((row) => ({
        country_code: row.country,
        country_name: countryName(row.country),
        flag_emoji: flagEmoji(row.country),
        count: row.count,
      })),
      cumulative_series: series,
      granularity: daily ? 'daily' : 'monthly',
    };
  }
}
