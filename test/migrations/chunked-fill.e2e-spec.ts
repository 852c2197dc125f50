import pg from 'pg';
import { DataSource } from 'typeorm';
import { SearchPrefixBitmaps1766000000000 } from '../../migrations/1766000000000-search-prefix-bitmaps.js';
import { CountrySearchBitmaps1766000000001 } from '../../migrations/1766000000001-country-search-bitmaps.js';
import { LibrariesWithoutPhoto1767100000000 } from '../../migrations/1767100000000-libraries-without-photo.js';
import { SearchTokenBitmaps1767500000000 } from '../../migrations/1767500000000-search-token-bitmaps.js';
import { SearchShortGrams1767800000000 } from '../../migrations/1767800000000-search-short-grams.js';
import { buildDataSourceOptions } from '../../src/database/data-source-options.js';
import { runMigrationsLocked } from '../../src/database/migrate-locked.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, queryRows, type TestDatabase } from '../support/database.js';

/** The migrations that fill per-chunk bitmaps from `libraries`, and the one that indexes it, last first. */
const REVERTED = [
  new SearchShortGrams1767800000000(),
  new SearchTokenBitmaps1767500000000(),
  new LibrariesWithoutPhoto1767100000000(),
  new CountrySearchBitmaps1766000000001(),
  new SearchPrefixBitmaps1766000000000(),
];

/** Each table's keys as a recount has them: `k(key, in_name)` of a library `l`. */
const TABLES = [
  {
    table: 'library_search_tokens',
    key: 'token',
    keys: `bookcase_search_tokens(l.search_text, lower(bookcase_unaccent(l.name))) k(key, in_name)`,
    inName: true,
  },
  {
    table: 'library_search_grams',
    key: 'token',
    keys: `bookcase_search_grams(l.search_text, lower(bookcase_unaccent(l.name))) k(key, in_name)`,
    inName: true,
  },
  {
    table: 'library_search_triples',
    key: 'token',
    keys: `bookcase_search_triples(l.search_text, lower(bookcase_unaccent(l.name))) k(key, in_name)`,
    inName: true,
  },
  {
    table: 'library_search_bitmaps',
    key: 'prefix',
    keys: 'bookcase_search_prefixes(l.search_vector) k(key, in_name)',
    inName: true,
  },
  {
    table: 'library_country_bitmaps',
    key: 'country',
    keys: 'LATERAL (SELECT l.country::text AS key, false AS in_name) k',
    inName: false,
  },
];

/**
 * The migrations of the per-chunk bitmaps (`library_search_bitmaps`, `library_country_bitmaps`,
 * `library_search_tokens`; `library_search_grams` and `library_search_triples`, brief 22f2) on a database that has
 * libraries (brief 22b): each fills its table chunk by chunk in short
 * transactions after its triggers exist, so writes to `libraries` go on during the fills, and the result is exactly
 * a recount whatever those writes were (inserts in filled, unfilled and new chunks, approvals, rejections, renames
 * that move a token in or out of the name, text edits, deletions that empty a chunk).
 */
describeWithDatabaseServer(
  'migrations that fill per-chunk bitmaps while libraries are written',
  () => {
    let db: TestDatabase;
    const CHUNKS = 40;

    beforeAll(async () => {
      db = await createTestDatabase();
      // Back to the schema before these migrations: their structure dropped, their records removed.
      const dataSource = await new DataSource(buildDataSourceOptions(db.url, 2)).initialize();
      try {
        const runner = dataSource.createQueryRunner();
        for (const migration of REVERTED) {
          await migration.down(runner);
          await runner.query('DELETE FROM schema_migrations WHERE name = $1', [migration.name]);
        }
        await runner.release();
      } finally {
        await dataSource.destroy();
      }
      // Three libraries in each of CHUNKS chunks of 8,192 ids (so a fill takes one transaction per chunk), the
      // second pending, the third with its street in its name and in its address.
      await queryRows(
        db.url,
        `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location, status,
                              created_at)
       SELECT c * 8192 + j, 'fill-' || c || '-' || j,
              CASE j WHEN 3 THEN 'Kobold Allee ' || c ELSE 'Bücherschrank ' || (c * 7 + j) % 50 END,
              'Nimm ein Buch ' || (c % 9) || ', bring eins.', 'Allee ' || j, 'Köln',
              (ARRAY['DE', 'AT', 'CH'])[1 + c % 3], '5066' || (c % 10),
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
            `UPDATE libraries SET description = 'Regal im Hof ' || $2, country = 'FR' WHERE id = $1`,
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

    it('lets writes commit during the fills, and each table holds exactly a recount', async () => {
      const dataSource = await new DataSource(buildDataSourceOptions(db.url, 2)).initialize();
      const writer = new pg.Client({ connectionString: db.url });
      await writer.connect();
      let done = false;
      /** Per fill index: the writes committed while it existed (its table's fill under way). */
      const duringFill = new Map<string, number>();
      let writes = 0;
      const exists = async (sql: string) =>
        (await writer.query<{ yes: boolean }>(`SELECT ${sql} AS yes`)).rows[0].yes;
      const writing = (async () => {
        while (!done) {
          // Only once the first triggers are committed: a write before them is the fills' to count.
          const triggers = await exists(
            `EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'libraries_search_bitmaps_delete')`,
          );
          if (!triggers) {
            await new Promise((resolve) => setTimeout(resolve, 1));
            continue;
          }
          const [text, params] = writeStatement(writes);
          await writer.query(text, params);
          writes += 1;
          // Committed while a fill's own index still exists: that fill had not finished.
          const { rows } = await writer.query<{ relname: string }>(
            `SELECT relname FROM pg_class WHERE relname LIKE '%\\_fill\\_idx'`,
          );
          for (const { relname } of rows)
            duringFill.set(relname, (duringFill.get(relname) ?? 0) + 1);
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

      expect(duringFill.size).toBeGreaterThan(0);
      // The fills of 1767800000000 (brief 22f2), each with writes committed while it ran.
      for (const table of ['library_search_grams', 'library_search_triples'])
        expect([table, (duringFill.get(`${table}_fill_idx`) ?? 0) > 0]).toEqual([table, true]);
      for (const table of TABLES) await expectRecounted(db.url, table);
      // No index of a fill left, none invalid.
      expect(
        await queryRows(
          db.url,
          `SELECT c.relname FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid
         WHERE c.relname LIKE '%\\_fill\\_idx' OR NOT coalesce(i.indisvalid, true)`,
        ),
      ).toEqual([]);
    });
  },
);

/**
 * The table holds exactly the bits of a recount of the approved libraries (each bit that should be set is, and as many
 * per key and chunk), and no empty row.
 */
async function expectRecounted(
  url: string,
  { table, key, keys, inName }: (typeof TABLES)[number],
): Promise<void> {
  const missing = await queryRows(
    url,
    `SELECT k.key, l.id FROM libraries l CROSS JOIN ${keys}
   LEFT JOIN ${table} s ON s.${key} = k.key AND s.chunk = l.id >> 13
   WHERE l.status = 'approved'
     AND (s.${key} IS NULL OR get_bit(s.approved, l.id & 8191) = 0
          ${inName ? 'OR get_bit(s.in_name, l.id & 8191) <> k.in_name::int' : ''})`,
  );
  expect({ table, missing }).toEqual({ table, missing: [] });
  const named = (bits: string) => (inName ? ` || '|' || ${bits}` : '');
  const kept = await queryRows(
    url,
    `SELECT ${key} || '|' || chunk || '|' || bit_count(approved)${named('bit_count(in_name)')} AS line
   FROM ${table} ORDER BY ${key}, chunk`,
  );
  const recount = await queryRows(
    url,
    `SELECT k.key || '|' || (l.id >> 13) || '|' || count(*)${named('count(*) FILTER (WHERE k.in_name)')} AS line
   FROM libraries l CROSS JOIN ${keys}
   WHERE l.status = 'approved' GROUP BY k.key, l.id >> 13 ORDER BY k.key, l.id >> 13`,
  );
  expect(kept.length).toBeGreaterThan(0);
  expect({ table, kept }).toEqual({ table, kept: recount });
  expect(
    await queryRows(url, `SELECT count(*)::int AS n FROM ${table} WHERE bit_count(approved) = 0`),
  ).toEqual([{ n: 0 }]);
}
