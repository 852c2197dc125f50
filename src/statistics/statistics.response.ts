import { ApiProperty } from '@nestjs/swagger';

export class CountryStatisticResponse {
  /** ISO 3166-1 alpha-2 */
  country_code: string;
  country_name: string;
  flag_emoji: string;
  @ApiProperty({ type: 'integer' })
  count: number;
}

export class SeriesPointResponse {
  /** YYYY-MM-DD (the first day of the month for monthly series) */
  period: string;
  @ApiProperty({ type: 'integer' })
  cumulative_count: number;
}

export class StatisticsResponse {
  /** Approved libraries */
  @ApiProperty({ type: 'integer' })
  total_approved: number;
  /** Approved libraries with a primary photo or an approved community photo */
  @ApiProperty({ type: 'integer' })
  total_with_image: number;
  @ApiProperty({ type: [CountryStatisticResponse], maxItems: 10 })
  top_countries: CountryStatisticResponse[];
  @ApiProperty({ type: [SeriesPointResponse] })
  cumulative_series: SeriesPointResponse[];
  @ApiProperty({ enum: ['daily', 'monthly'] })
  granularity: 'daily' | 'monthly';
}
