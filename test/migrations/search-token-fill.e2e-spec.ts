import pg from 'pg';
import { DataSource } from 'typeorm';
import { SearchTokenBitmaps1767500000000 } from '../../migrations/1767500000000-search-token-bitmaps.js';
import { buildDataSourceOptions } from '../../src/database/data-source-options.js';
import { runMigrationsLocked } from '../../src/database/migrate-locked.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, queryRows, type TestDatabase } from '../support/database.js';

/**
 * Migration 1767500000000 (`library_search_tokens`) on a database that has libraries (brief 22b): it fills the table
 * chunk by chunk in short transactions after its triggers exist, so writes to `libraries` go on during the fill, and
 * the result is exactly a recount whatever those writes were (inserts in filled, unfilled and new chunks, approvals,
 * rejections, renames that move a token in or out of the name, text edits, deletions that empty a chunk).
 */
describeWithDatabaseServer(
  'migration 1767500000000 fills library_search_tokens while libraries are written',
  () => {
    let db: TestDatabase;
    const CHUNKS = 120;

    beforeAll(async () => {
      db = await createTestDatabase();
      // Back to the schema before the migration: its structure dropped, its record removed.
      const dataSource = await new DataSource(buildDataSourceOptions(db.url, 2)).initialize();
      try {
        const runner = dataSource.createQueryRunner();
        await new SearchTokenBitmaps1767500000000().down(runner);
        await runner.query(
          `DELETE FROM schema_migrations WHERE name = 'SearchTokenBitmaps1767500000000'`,
        );
        await runner.release();
      } finally {
        await dataSource.destroy();
      }
      // Three libraries in each of CHUNKS chunks of 8,192 ids (so the fill takes one transaction per chunk), the
      // second pending, the third with its street in its name and in its address.
      await queryRows(
        db.url,
        `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location, status,
                              created_at)
       SELECT c * 8192 + j, 'fill-' || c || '-' || j,
              CASE j WHEN 3 THEN 'Kobold Allee ' || c ELSE 'Bücherschrank ' || (c * 7 + j) % 50 END,
              'Nimm ein Buch ' || (c % 9) || ', bring eins.', 'Allee ' || j, 'Köln', 'DE', '5066' || (c % 10),
              ST_SetSRID(ST_MakePoint(7, 51), 4326)::geography,
              CASE j WHEN 2 THEN 'pending' ELSE 'approved' END,
              timestamptz '2024-01-01' + c * interval '1 day'
       FROM generate_series(0, ${CHUNKS - 1}) c, generate_series(1, 3) j`,
      );
    });

    afterAll(async () => {
      await db?.drop();
    });

    /** One write of each kind in turn, in a random chunk (or one above the libraries'), each in its own statement. */
    function writeStatement(n: number): [string, unknown[]] {
      const chunk = Math.floor(Math.random() * CHUNKS);
      const id = (j: number) => chunk * 8192 + j;
      switch (n % 8) {
        case 0:
          return [
            `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location, status)
           VALUES ($1, $2, 'Neuer Kobold', 'Tauschregal am Markt', 'Markt 1', 'Bern', 'CH', '3011',
                   ST_SetSRID(ST_MakePoint(7, 47), 4326)::geography, 'approved')`,
            [id(100 + n), `fill-new-${n}`],
          ];
        case 1:
          return [`UPDATE libraries SET status = 'approved' WHERE id = $1`, [id(2)]];
        case 2:
          return [`UPDATE libraries SET status = 'rejected' WHERE id = $1`, [id(1)]];
        case 3:
          // `allee` leaves the name and stays in the address: only the in-name bit changes.
          return [`UPDATE libraries SET name = 'Kobold ' || id WHERE id = $1`, [id(3)]];
        case 4:
          return [
            `UPDATE libraries SET description = 'Regal im Hof ' || $2 WHERE id = $1`,
            [id(1), n],
          ];
        case 5:
          return [`DELETE FROM libraries WHERE id BETWEEN $1 AND $1 + 8191`, [id(0)]];
        case 6:
          return [
            `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location, status)
           VALUES ($1, $2, 'Oberer Kobold', '', 'Gasse 9', 'Wien', 'AT', '1010',
                   ST_SetSRID(ST_MakePoint(16, 48), 4326)::geography, 'approved')`,
            [(CHUNKS + 5) * 8192 + n, `fill-above-${n}`],
          ];
        default:
          return [`UPDATE libraries SET name = 'Allee Kobold ' || id WHERE id = $1`, [id(3)]];
      }
    }

    it('lets writes commit during the fill, and holds exactly a recount of the approved libraries', async () => {
      const dataSource = await new DataSource(buildDataSourceOptions(db.url, 2)).initialize();
      const writer = new pg.Client({ connectionString: db.url });
      await writer.connect();
      let done = false;
      let duringFill = 0;
      let writes = 0;
      const exists = async (sql: string) =>
        (await writer.query<{ yes: boolean }>(`SELECT ${sql} AS yes`)).rows[0].yes;
      const writing = (async () => {
        while (!done) {
          // Only once the triggers are committed: a write before them is the fill's to count.
          const triggers = await exists(
            `EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'libraries_search_tokens_delete')`,
          );
          if (!triggers) {
            await new Promise((resolve) => setTimeout(resolve, 1));
            continue;
          }
          const [text, params] = writeStatement(writes);
          await writer.query(text, params);
          writes += 1;
          // Committed while the fill's own index still exists: the fill had not finished.
          if (await exists(`to_regclass('library_search_tokens_fill_idx') IS NOT NULL`))
            duringFill += 1;
        }
      })();
      try {
        await runMigrationsLocked(dataSource);
      } finally {
        done = true;
        await writing;
        await writer.end();
        await dataSource.destroy();
      }

      expect(duringFill).toBeGreaterThan(0);
      await expectTokensExact(db.url);
      expect(
        await queryRows(db.url, `SELECT to_regclass('library_search_tokens_fill_idx') AS idx`),
      ).toEqual([{ idx: null }]);
    });
  },
);

/** library_search_tokens holds exactly the bits of a recount of the approved libraries, and no empty row. */
async function expectTokensExact(url: string): Promise<void> {
  const missing = await queryRows(
    url,
    `SELECT p.token, l.id FROM libraries l
     CROSS JOIN bookcase_search_tokens(l.search_text, lower(bookcase_unaccent(l.name))) p
     LEFT JOIN library_search_tokens s ON s.token = p.token AND s.chunk = l.id >> 13
     WHERE l.status = 'approved'
       AND (s.token IS NULL OR get_bit(s.approved, l.id & 8191) = 0
            OR get_bit(s.in_name, l.id & 8191) <> p.in_name::int)`,
  );
  expect(missing).toEqual([]);
  const kept = await queryRows(
    url,
    `SELECT token || '|' || chunk || '|' || bit_count(approved) || '|' || bit_count(in_name) AS line
     FROM library_search_tokens ORDER BY token, chunk`,
  );
  const recount = await queryRows(
    url,
    `SELECT p.token || '|' || (l.id >> 13) || '|' || count(*) || '|' || count(*) FILTER (WHERE p.in_name) AS line
     FROM libraries l, bookcase_search_tokens(l.search_text, lower(bookcase_unaccent(l.name))) p
     WHERE l.status = 'approved' GROUP BY p.token, l.id >> 13 ORDER BY p.token, l.id >> 13`,
  );
  expect(kept.length).toBeGreaterThan(0);
  expect(kept).toEqual(recount);
  expect(
    await queryRows(
      url,
      'SELECT count(*)::int AS n FROM library_search_tokens WHERE bit_count(approved) = 0',
    ),
  ).toEqual([{ n: 0 }]);
}
