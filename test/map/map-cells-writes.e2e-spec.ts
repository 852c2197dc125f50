/**
 * Writes that recount the map grid (library_map_cells) read only the libraries of the cells they touch, whatever the
 * planner estimates. The recount's dirty cells live in a temporary table; without statistics PostgreSQL assumed
 * thousands of them and joined them to every approved library (at 1M, rejecting one library took 7.7–9.3 s in the
 * trigger). Here a few thousand libraries (ANALYZEd, sequential scans allowed) make a whole-table read visible:
 * `pg_stat_xact_user_tables` counts the rows the transaction read from `libraries`, triggers included. The grid must
 * also still match a recount from scratch after each write.
 */
import type pg from 'pg';
import { withClient } from '../support/database.js';
import { insertSpreadLibraries } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const ROWS = 4000;
/** The libraries a single write may read: its own row, its ~150 m cell's neighbours, the other triggers' probes. */
const BOUNDED_READ = 200;

describe('map grid recount on writes', () => {
  const { db } = useTestSuite({ app: false });

  beforeAll(async () => {
    await insertSpreadLibraries(db.url, ROWS, { prefix: 'grid', west: 5, south: 45, span: 10 });
    await withClient(db.url, (client) => client.query('VACUUM ANALYZE library_map_cells'));
  });

  /** Runs `write` in a transaction and returns how many `libraries` rows it read (rolled back afterwards). */
  async function rowsRead(client: pg.Client, write: string, params: unknown[]): Promise<number> {
    await client.query('BEGIN');
    try {
      await client.query(write, params);
      const { rows } = await client.query<{ read: string }>(
        `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS read
         FROM pg_stat_xact_user_tables WHERE relname = 'libraries'`,
      );
      await expectGridExact(client);
      return Number(rows[0].read);
    } finally {
      await client.query('ROLLBACK');
    }
  }

  /** The grid equals a fresh aggregation of the approved libraries, at the finest and the coarsest level. */
  async function expectGridExact(client: pg.Client): Promise<void> {
    for (const level of [16, 3]) {
      const { rows } = await client.query<{ kept: string; fresh: string }>(
        `SELECT (SELECT coalesce(sum(count), 0) FROM library_map_cells WHERE level = $1)::text AS kept,
                (SELECT count(*) FROM libraries WHERE status = 'approved')::text AS fresh`,
        [level],
      );
      expect(rows[0].kept).toBe(rows[0].fresh);
      const { rows: wrong } = await client.query(
        `SELECT bookcase_map_cell(bookcase_map_x(ST_X(l.location::geometry)), $1) AS cx,
                bookcase_map_cell(bookcase_map_y(ST_Y(l.location::geometry)), $1) AS cy,
                l.country, count(*)::int AS n
         FROM libraries l WHERE l.status = 'approved' GROUP BY 1, 2, 3
         EXCEPT
         SELECT cx, cy, country, sum(count)::int FROM library_map_cells WHERE level = $1 GROUP BY 1, 2, 3`,
        [level],
      );
      expect(wrong).toEqual([]);
    }
  }

  it('rejecting an approved library reads its cell, not every library', async () => {
    await withClient(db.url, async (client) => {
      const read = await rowsRead(
        client,
        `UPDATE libraries SET status = 'rejected' WHERE slug = $1`,
        ['grid-1234'],
      );
      expect(read).toBeLessThan(BOUNDED_READ);
    });
  });

  it('moving an approved library recounts both cells only', async () => {
    await withClient(db.url, async (client) => {
      const read = await rowsRead(
        client,
        `UPDATE libraries SET location = ST_SetSRID(ST_MakePoint(12.5, 51.5), 4326)::geography WHERE slug = $1`,
        ['grid-77'],
      );
      expect(read).toBeLessThan(BOUNDED_READ);
    });
  });

  it('approving a community photo of a library without its own recounts that library only', async () => {
    await withClient(db.url, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status)
         SELECT id, 'community/1.jpg', 'community/1-thumb.jpg', 'pending' FROM libraries WHERE slug = 'grid-333'
         RETURNING id`,
      );
      try {
        const read = await rowsRead(
          client,
          `UPDATE library_photos SET status = 'approved' WHERE id = $1`,
          [rows[0].id],
        );
        expect(read).toBeLessThan(BOUNDED_READ);
      } finally {
        await client.query('DELETE FROM library_photos WHERE id = $1', [rows[0].id]);
      }
    });
  });
});
