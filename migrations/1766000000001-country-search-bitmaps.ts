import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, createUnlessExists, fillByChunk } from './chunked-fill.js';

/**
 * `q` with `country` at a million libraries (issue 22): `library_country_bitmaps`, per country and chunk of 8,192
 * library ids (`id >> 13`), a bitmap of the chunk's approved libraries in the country, in the layout of
 * `library_search_bitmaps` (migration 1766000000000). A `q` list filtered by country is then counted as the AND of
 * its words' bitmaps and its country's, chunk by chunk, instead of through GIN (linear in the matches:
 * `book swap&country=DE`, 30k matches, read 38k heap pages). One row per library to keep (not one per prefix), so
 * the table is small (about 2,600 rows of 1 KB at 1M) and its fill quick. Kept by statement-level triggers like the
 * prefix bitmaps: the (country, library) pairs whose membership changed are toggled (XOR) in key order. Filled a
 * chunk at a time after the triggers exist (fillByChunk, brief 22b), not under one lock on `libraries`.
 */
export class CountrySearchBitmaps1766000000001 implements MigrationInterface {
  name = 'CountrySearchBitmaps1766000000001';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createUnlessExists(queryRunner, 'library_country_bitmaps', () =>
      this.createStructure(queryRunner),
    );
    // For the fill only: the rows of a chunk, to replace them.
    await createIndexConcurrently(
      queryRunner,
      'library_country_bitmaps_fill_idx',
      'ON library_country_bitmaps (chunk)',
    );
    await fillByChunk(queryRunner, {
      table: 'library_country_bitmaps',
      columns: 'country, chunk, approved',
      rows: `
        SELECT l.country, $1::int, bookcase_search_bits(array_agg(l.id & 8191))
        FROM libraries l
        WHERE l.status = 'approved' AND l.id >= $1::int * 8192::bigint AND l.id < ($1::int + 1) * 8192::bigint
        GROUP BY 1 ORDER BY 1`,
    });
    await queryRunner.query('DROP INDEX CONCURRENTLY library_country_bitmaps_fill_idx');
  }

  /** The table, its function and its triggers (the table empty). */
  private async createStructure(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE library_country_bitmaps (
        country character(2) NOT NULL,
        chunk integer NOT NULL,
        approved bit(8192) NOT NULL,
        PRIMARY KEY (country, chunk)
      )`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_country_bitmaps_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        flips text;
        empty_countries text[];
        empty_chunks integer[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          flips := $q$SELECT n.country, n.id FROM new_rows n WHERE n.status = 'approved'$q$;
        ELSIF TG_OP = 'DELETE' THEN
          flips := $q$SELECT o.country, o.id FROM old_rows o WHERE o.status = 'approved'$q$;
        ELSE
          -- An approved library on one side only (a new status or a new country); unchanged rows cost a join.
          flips := $q$SELECT d.country, d.id FROM (
              SELECT o.country, o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
              WHERE o.status = 'approved' AND (n.status <> 'approved' OR n.country IS DISTINCT FROM o.country)
              UNION ALL
              SELECT n.country, n.id FROM old_rows o JOIN new_rows n ON n.id = o.id
              WHERE n.status = 'approved' AND (o.status <> 'approved' OR n.country IS DISTINCT FROM o.country)
            ) d$q$;
        END IF;
        EXECUTE format($s$
          WITH toggled AS (
            INSERT INTO library_country_bitmaps AS s (country, chunk, approved)
            SELECT f.country, f.id >> 13, bookcase_search_bits(array_agg(f.id & 8191))
            FROM (%s) f
            GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (country, chunk) DO UPDATE SET approved = s.approved # excluded.approved
            RETURNING s.country, s.chunk, s.approved)
          SELECT array_agg(t.country), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
        $s$, flips) INTO empty_countries, empty_chunks;
        IF empty_countries IS NOT NULL THEN
          DELETE FROM library_country_bitmaps s
          USING unnest(empty_countries, empty_chunks) AS e(country, chunk)
          WHERE s.country = e.country AND s.chunk = e.chunk AND bit_count(s.approved) = 0;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_country_bitmaps_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_country_bitmaps_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_country_bitmaps_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_country_bitmaps_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_country_bitmaps_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_country_bitmaps_sync()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER libraries_country_bitmaps_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_country_bitmaps_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_country_bitmaps_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_country_bitmaps_sync()');
    await queryRunner.query('DROP TABLE library_country_bitmaps');
  }
}
