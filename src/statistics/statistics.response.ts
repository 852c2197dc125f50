import { ApiProperty } from '@nestjs/swagger';

export class CountryStatisticResponse {
  /** ISO 3166-1 alpha-2 */
  country_code: string;
  country_name: string;
  flag_emoji: string;
  count: number;
}

export class SeriesPointResponse {
  /** YYYY-MM-DD (the first day of the month for monthly series) */
  period: string;
  cumulative_count: number;
}

export class StatisticsResponse {
  /** Approved libraries */
  total_approved: number;
  /** Approved libraries with a primary photo or an approved community photo */
  total_with_image: number;
  @ApiProperty({ type: [CountryStatisticResponse], maxItems: 10 })
  top_countries: CountryStatisticResponse[];
  @ApiProperty({ type: [SeriesPointResponse] })
  cumulative_series: SeriesPointResponse[];
  @ApiProperty({ enum: ['daily', 'monthly'] })
  granularity: 'daily' | 'monthly';
}
