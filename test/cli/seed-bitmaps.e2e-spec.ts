import { queryRows } from '../support/database.js';
import { useCliSuite } from './cli-support.js';

/** The trigger-kept tables of a row per key and per chunk of 8,192 library ids. */
const CHUNKED = ['library_search_bitmaps', 'library_search_tokens', 'library_country_bitmaps'];

/**
 * `seed` inserts in batches that end on a chunk's last id (brief 22b), so the triggers write each row of the
 * per-chunk bitmaps once: batches that shared a chunk rewrote its rows (an upsert per batch), and at 1M the dead copies
 * made library_search_bitmaps 2.4 times its size.
 */
describe('seed writes each per-chunk bitmap row once', () => {
  const cli = useCliSuite('seed-bitmaps');
  const { db } = cli;

  it('inserts every row of the per-chunk bitmaps and updates none, across two chunks', async () => {
    const result = await cli.run(['seed', '--libraries', '9000']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const [{ chunks }] = await queryRows<{ chunks: number }>(
      db.url,
      'SELECT count(DISTINCT id >> 13)::int AS chunks FROM libraries',
    );
    expect(chunks).toBe(2);
    for (const table of CHUNKED) {
      const [{ rows }] = await queryRows<{ rows: number }>(
        db.url,
        `SELECT count(*)::int AS rows FROM ${table}`,
      );
      expect(rows).toBeGreaterThan(0);
      // The CLI's backends report their writes as they end: wait until every row is accounted for.
      let stats = { inserted: 0, updated: 0 };
      for (let wait = 0; wait < 100 && stats.inserted + stats.updated < rows; wait += 1) {
        if (wait) await new Promise((resolve) => setTimeout(resolve, 100));
        [stats] = await queryRows<{ inserted: number; updated: number }>(
          db.url,
          `SELECT n_tup_ins::int AS inserted, n_tup_upd::int AS updated FROM pg_stat_user_tables
           WHERE relname = $1`,
          [table],
        );
      }
      expect({ table, ...stats }).toEqual({ table, inserted: rows, updated: 0 });
    }
  });
});
