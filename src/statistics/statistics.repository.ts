import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { HAS_PHOTO } from '../libraries/libraries.repository.js';

export interface Totals {
  total_approved: number;
  total_with_image: number;
  oldest: Date | null;
}

@Injectable()
export class StatisticsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async totals(): Promise<Totals> {
    const rows = await this.dataSource.query<Totals[]>(
      `SELECT count(*)::int AS total_approved,
              count(*) FILTER (WHERE ${HAS_PHOTO})::int AS total_with_image,
              min(l.created_at) AS oldest
       FROM libraries l WHERE l.status = 'approved'`,
    );
    return rows[0];
  }

  topCountries(limit: number): Promise<{ country: string; count: number }[]> {
    return this.dataSource.query(
      `SELECT country, count(*)::int AS count FROM libraries WHERE status = 'approved'
       GROUP BY country ORDER BY count DESC, country ASC LIMIT $1`,
      [limit],
    );
  }

  /**
   * Running total of approved libraries per UTC day or month, every period from the first one to `until` included
   * (periods without additions repeat the running total).
   */
  cumulativeSeries(
    unit: 'day' | 'month',
    until: Date,
  ): Promise<{ period: string; cumulative_count: number }[]> {
    return this.dataSource.query(
      `WITH added AS (
         SELECT date_trunc($1, created_at AT TIME ZONE 'UTC') AS period, count(*)::int AS n
         FROM libraries WHERE status = 'approved' GROUP BY 1
       ),
       periods AS (
         SELECT generate_series(
           (SELECT min(period) FROM added),
           greatest((SELECT max(period) FROM added), date_trunc($1, $2::timestamptz AT TIME ZONE 'UTC')),
           ('1 ' || $1)::interval
         ) AS period
       )
       SELECT to_char(p.period, 'YYYY-MM-DD') AS period,
              (sum(coalesce(a.n, 0)) OVER (ORDER BY p.period))::int AS cumulative_count
       FROM periods p LEFT JOIN added a ON a.period = p.period
       ORDER BY p.period`,
      [unit, until.toISOString()],
    );
  }
}
