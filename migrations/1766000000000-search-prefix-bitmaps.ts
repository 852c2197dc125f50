import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, createUnlessExists, fillByChunk } from './chunked-fill.js';

/**
 * `q` of several words at a million libraries (issue 22): exact totals without reading the matches.
 *
 * `library_search_bitmaps`: per word prefix (the prefixes of `library_search_prefixes`: 1–24 characters of a lexeme
 * of `search_vector`) and per chunk of 8,192 library ids (`id >> 13`), a bitmap of the approved libraries of the
 * chunk that have a lexeme starting with the prefix (`approved`; bit `id & 8191`, counted from the left as
 * `set_bit` does), and of those that have one in the name (`in_name`, weight A). A `q` of several words is the AND
 * of prefix queries (`'w1':* & 'w2':*`), so its exact total is the bits set in the AND of its words' bitmaps, chunk
 * by chunk (`bit_and`, `bit_count`), and its name matches the same over `in_name`: at 1M about 120 rows per word,
 * whatever the number of matches. Counting through GIN read a heap page per match: PostgreSQL 15.20 has no bitmap
 * scan that skips all-visible heap pages (measured: a `count(*)` through a btree bitmap on a vacuumed table reads
 * every heap block), so `book swap` (tens of thousands of matches) cost seconds cold.
 *
 * Core PostgreSQL bit strings, hand-written around: roaringbitmap is available neither on our PostgreSQL nor in the
 * embedded PGlite, and intarray's sorted id arrays (both have it) take 32 bits per match where a dense prefix needs
 * one. Rows whose `approved` bitmap becomes empty are deleted. Kept by statement-level triggers
 * like `library_search_prefixes`: per statement, the (prefix, library) pairs whose membership changed are toggled
 * (XOR) with one grouped upsert in key order, so concurrent writers lock common rows in the same order.
 *
 * The fill runs a chunk at a time after the triggers exist (fillByChunk, brief 22b): under one `SHARE` lock on
 * `libraries` it blocked every write for 7.5 minutes at 1M.
 */
export class SearchPrefixBitmaps1766000000000 implements MigrationInterface {
  name = 'SearchPrefixBitmaps1766000000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createUnlessExists(queryRunner, 'library_search_bitmaps', () =>
      this.createStructure(queryRunner),
    );
    // For the fill only: the rows of a chunk, to replace them.
    await createIndexConcurrently(
      queryRunner,
      'library_search_bitmaps_fill_idx',
      'ON library_search_bitmaps (chunk)',
    );
    await fillByChunk(queryRunner, {
      table: 'library_search_bitmaps',
      columns: 'prefix, chunk, approved, in_name',
      rows: `
        SELECT p.prefix, $1::int,
               bookcase_search_bits(array_agg(l.id & 8191)),
               bookcase_search_bits(coalesce(array_agg(l.id & 8191) FILTER (WHERE p.in_name), '{}'))
        FROM libraries l, bookcase_search_prefixes(l.search_vector) p
        WHERE l.status = 'approved' AND l.id >= $1::int * 8192::bigint AND l.id < ($1::int + 1) * 8192::bigint
        GROUP BY 1 ORDER BY 1`,
    });
    await queryRunner.query('DROP INDEX CONCURRENTLY library_search_bitmaps_fill_idx');
  }

  /** The table, its functions and its triggers (the table empty). */
  private async createStructure(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE library_search_bitmaps (
        prefix text NOT NULL,
        chunk integer NOT NULL,
        approved bit(8192) NOT NULL,
        in_name bit(8192) NOT NULL,
        PRIMARY KEY (prefix, chunk)
      )`);
    // Two 1 KB bitmaps make a row of over 2 KB, which PostgreSQL compresses (a sparse bitmap to a few bytes);
    // STORAGE MAIN keeps it in the row rather than in the TOAST table.
    await queryRunner.query(`
      ALTER TABLE library_search_bitmaps
        ALTER COLUMN approved SET STORAGE MAIN, ALTER COLUMN in_name SET STORAGE MAIN`);
    // The bitmap of a chunk with the given bits (0–8191) set. set_bit copies the kilobyte once per bit (about 3 µs):
    // right for the few bits of a write. From 100 bits on (the fill, a seed batch) it is built from 64-bit words
    // (bit_or over bigint) and their text instead (about 0.3 ms, plus 0.5 µs a bit).
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_bits(offsets integer[]) RETURNS bit(8192)
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
      DECLARE
        bits bit(8192) := B'0'::bit(8192);
        o integer;
      BEGIN
        IF cardinality(offsets) >= 100 THEN
          SELECT rpad(string_agg(repeat('0', 64 * (w.w - coalesce(w.before, -1) - 1)) || w.word::bit(64)::text, ''
                                 ORDER BY w.w), 8192, '0')::bit(8192)
          INTO bits
          FROM (SELECT g.w, g.word, lag(g.w) OVER (ORDER BY g.w) AS before
                FROM (SELECT x >> 6 AS w, bit_or(1::bigint << (63 - (x & 63))) AS word
                      FROM unnest(offsets) x GROUP BY 1) g) w;
          RETURN bits;
        END IF;
        FOREACH o IN ARRAY offsets LOOP
          bits := set_bit(bits, o, 1);
        END LOOP;
        RETURN bits;
      END
      $$`);
    // Whether every lexeme of a query has its prefix rows (at most 24 characters, as bookcase_search_prefixes cuts).
    // Immutable, so PostgreSQL computes it when it plans a statement whose lexemes are constants.
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_prefixed(lexemes text[]) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(bool_and(char_length(x) <= 24), false) FROM unnest(lexemes) x
      $$`);
    // Per statement, the (prefix, library) pairs whose membership changed: of a prefix (`approved`), of a prefix in
    // the name (`in_name`). They are toggled (XOR) by one grouped upsert in key order; the rows it leaves empty are
    // deleted after it (a statement cannot delete the rows its own upsert wrote).
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_bitmaps_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        flips text;
        empty_prefixes text[];
        empty_chunks integer[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          -- An inserted approved library sets each of its prefixes (and each of its name's); a deleted one clears them.
          flips := $q$SELECT p.prefix, n.id, true AS approved, p.in_name
            FROM new_rows n, bookcase_search_prefixes(n.search_vector) p WHERE n.status = 'approved'$q$;
        ELSIF TG_OP = 'DELETE' THEN
          flips := $q$SELECT p.prefix, o.id, true AS approved, p.in_name
            FROM old_rows o, bookcase_search_prefixes(o.search_vector) p WHERE o.status = 'approved'$q$;
        ELSE
          -- What differs between the old approved vector and the new approved one: a prefix on one side only, or in
          -- the name on one side only. Rows whose status and vector stay as they were cost a join and nothing else.
          flips := $q$SELECT d.prefix, d.id, count(*) = 1 AS approved,
              count(*) FILTER (WHERE d.in_name) = 1 AS in_name
            FROM (
              SELECT p.prefix, o.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id, bookcase_search_prefixes(o.search_vector) p
              WHERE o.status = 'approved'
                AND (n.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
              UNION ALL
              SELECT p.prefix, n.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id, bookcase_search_prefixes(n.search_vector) p
              WHERE n.status = 'approved'
                AND (o.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
            ) d GROUP BY d.prefix, d.id$q$;
        END IF;
        EXECUTE format($s$
          WITH toggled AS (
            INSERT INTO library_search_bitmaps AS s (prefix, chunk, approved, in_name)
            SELECT f.prefix, f.id >> 13,
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.approved), '{}')),
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.in_name), '{}'))
            FROM (%s) f WHERE f.approved OR f.in_name
            GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (prefix, chunk) DO UPDATE
              SET approved = s.approved # excluded.approved, in_name = s.in_name # excluded.in_name
            RETURNING s.prefix, s.chunk, s.approved)
          SELECT array_agg(t.prefix), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
        $s$, flips) INTO empty_prefixes, empty_chunks;
        IF empty_prefixes IS NOT NULL THEN
          DELETE FROM library_search_bitmaps s
          USING unnest(empty_prefixes, empty_chunks) AS e(prefix, chunk)
          WHERE s.prefix = e.prefix AND s.chunk = e.chunk AND bit_count(s.approved) = 0;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_bitmaps_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_bitmaps_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_bitmaps_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_bitmaps_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_bitmaps_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_bitmaps_sync()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER libraries_search_bitmaps_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_search_bitmaps_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_search_bitmaps_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_search_bitmaps_sync()');
    await queryRunner.query('DROP FUNCTION bookcase_search_prefixed(text[])');
    await queryRunner.query('DROP FUNCTION bookcase_search_bits(integer[])');
    await queryRunner.query('DROP TABLE library_search_bitmaps');
  }
}
