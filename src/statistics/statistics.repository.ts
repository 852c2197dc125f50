import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';

export interface Totals {
  total_approved: number;
  total_with_image: number;
  oldest: Date | null;
}

@Injectable()
export class StatisticsRepository {
  constructor(private readonly db: Database) {}

  async totals(): Promise<Totals> {
    // HAS_PHOTO's correlated EXISTS is costed per approved row, which lifts this statement far above
    // jit_above_cost: JIT compilation then took 158 of its 223 ms at 100,000 libraries (issue 7). A join on the
    // distinct ids of libraries with an approved photo is the same count, planned as one hash join without JIT.
    const rows = await this.db.query<Totals[]>(
      `SELECT count(*)::int AS total_approved,
              count(*) FILTER (WHERE l.photo_key IS NOT NULL OR p.library_id IS NOT NULL)::int AS total_with_image,
              min(l.created_at) AS oldest
       FROM libraries l
       LEFT JOIN (SELECT DISTINCT library_id FROM library_photos WHERE status = 'approved') p
         ON p.library_id = l.id
       WHERE l.status = 'approved'`,
    );
    return rows[0];
  }

  topCountries(limit: number): Promise<{ country: string; count: number }[]> {
    return this.db.query(
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
    return this.db.query(
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
