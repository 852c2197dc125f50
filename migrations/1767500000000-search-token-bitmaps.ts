import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, createUnlessExists, fillByChunk } from './chunked-fill.js';

/**
 * Substring `search` at a million libraries (issue 22): exact totals without reading the matches.
 *
 * A substring without a space lies inside one of the space-separated tokens of `search_text`, and one with a single
 * space inside a pair of neighbouring tokens, so the libraries whose text holds it are the union of the libraries of
 * every token (or pair) that holds it. `library_search_tokens` keeps, per token (or pair) and per chunk of 8,192
 * library ids (the layout of `library_search_bitmaps`, migration 1766000000000), a bitmap of the approved libraries
 * of the chunk with it (`approved`), and of those with it in the folded name (`in_name`, what the list ranks first).
 * A `search` of 3 to 100 folded characters with at most one space is counted as the bits set in the OR, chunk by
 * chunk, of the rows of the tokens that contain it: the tokens are found through the trigram index of this table,
 * never through the libraries (a heap row per match). Tokens over 200 characters are kept as pieces of 200 starting
 * every 100, so any substring of up to 100 lies whole in a piece (and a key never nears the btree's size limit).
 *
 * Kept by statement-level triggers in the manner of `library_search_bitmaps`: per statement, the (token, library)
 * pairs whose membership changed are toggled (XOR) by one grouped upsert in key order; rows left empty are deleted.
 * The name's trigram index (partial, approved) finds the name matches of a rare substring without the others.
 *
 * Built without blocking writes to `libraries` for minutes (brief 22b; at 1M the fill under one `SHARE` lock took
 * 3–9 minutes): the table, its functions and triggers in one short transaction, then the fill a chunk at a time in
 * transactions of their own (fillByChunk), then the indexes `CONCURRENTLY`. Not one transaction, so a run interrupted
 * part way leaves the structure, and the next run goes on from it.
 */
export class SearchTokenBitmaps1767500000000 implements MigrationInterface {
  name = 'SearchTokenBitmaps1767500000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createUnlessExists(queryRunner, 'library_search_tokens', () =>
      this.createStructure(queryRunner),
    );
    // For the fill only: the rows of a chunk, to replace them.
    await createIndexConcurrently(
      queryRunner,
      'library_search_tokens_fill_idx',
      'ON library_search_tokens (chunk)',
    );
    await fillByChunk(queryRunner, {
      table: 'library_search_tokens',
      columns: 'token, chunk, approved, in_name',
      rows: `
        SELECT p.token, $1::int,
               bookcase_search_bits(array_agg(l.id & 8191)),
               bookcase_search_bits(coalesce(array_agg(l.id & 8191) FILTER (WHERE p.in_name), '{}'))
        FROM libraries l, bookcase_search_tokens(l.search_text, lower(bookcase_unaccent(l.name))) p
        WHERE l.status = 'approved' AND l.id >= $1::int * 8192::bigint AND l.id < ($1::int + 1) * 8192::bigint
        GROUP BY 1 ORDER BY 1`,
    });
    // Tokens and pairs apart: a substring without a space is in a pair only where it is in one of its tokens, and the
    // pairs that hold a common word are many (at 1M, `bücher`: 32,787 buffers with the pairs, 319 without).
    await createIndexConcurrently(
      queryRunner,
      'library_search_tokens_trgm_idx',
      `ON library_search_tokens USING gin (token gin_trgm_ops) WHERE strpos(token, ' ') = 0`,
    );
    await createIndexConcurrently(
      queryRunner,
      'library_search_pairs_trgm_idx',
      `ON library_search_tokens USING gin (token gin_trgm_ops) WHERE strpos(token, ' ') > 0`,
    );
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_name_trgm_idx',
      `ON libraries USING gin (lower(bookcase_unaccent(name::text)) gin_trgm_ops) WHERE status = 'approved'`,
    );
    await queryRunner.query('DROP INDEX CONCURRENTLY library_search_tokens_fill_idx');
  }

  /** The table, its functions and its triggers (the table empty). */
  private async createStructure(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE library_search_tokens (
        token text NOT NULL,
        chunk integer NOT NULL,
        approved bit(8192) NOT NULL,
        in_name bit(8192) NOT NULL,
        PRIMARY KEY (token, chunk)
      ) WITH (toast_tuple_target = 128)`);
    // Kept in the row (MAIN), and compressed down to the smallest row PostgreSQL allows: most tokens are rare (postal
    // codes, house numbers), and a bitmap of a few bits compresses to a few bytes. With the default target only one of
    // the two bitmaps was compressed, and every row kept a raw kilobyte (at 1M: 920 MB for 783,783 rows).
    await queryRunner.query(`
      ALTER TABLE library_search_tokens
        ALTER COLUMN approved SET STORAGE MAIN, ALTER COLUMN in_name SET STORAGE MAIN`);
    // The distinct tokens of a library's folded text (`search_text`) and of its folded name, split on spaces, and the
    // pairs of neighbouring tokens (`a b`: a substring with one space lies in one pair). A token or pair over 200
    // characters as its pieces (above). Only those with three letters or digits in a row: no other can hold a
    // substring that bookcase_search_tokenized accepts (most house numbers and short words are left out).
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_tokens(folded text, folded_name text)
      RETURNS TABLE (token text, in_name boolean)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT p.piece, bool_or(d.in_name)
        FROM (SELECT false AS in_name, string_to_array(folded, ' ') AS a
              UNION ALL
              SELECT true, string_to_array(folded_name, ' ')) d
        CROSS JOIN LATERAL (
          SELECT d.a[i] AS x FROM generate_subscripts(d.a, 1) i
          UNION ALL
          SELECT d.a[i] || ' ' || d.a[i + 1] FROM generate_subscripts(d.a, 1) i WHERE i < cardinality(d.a)) t
        CROSS JOIN LATERAL (
          SELECT t.x AS piece WHERE char_length(t.x) <= 200
          UNION ALL
          SELECT substr(t.x, s, 200) FROM generate_series(1, char_length(t.x) - 99, 100) s
          WHERE char_length(t.x) > 200) p
        WHERE p.piece ~ '[[:alnum:]]{3}'
        GROUP BY p.piece
      $$`);
    // Whether a folded substring is counted from the tokens: 3 to 100 characters, at most one space, and three
    // letters or digits in a row (what the trigram index can look up). Immutable, so PostgreSQL decides when it plans
    // a statement whose pattern is a constant.
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_tokenized(folded text) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT char_length(folded) BETWEEN 3 AND 100 AND cardinality(string_to_array(folded, ' ')) <= 2
          AND folded ~ '[[:alnum:]]{3}'
      $$`);
    // The chunks' bitmaps end to end (bit `id` of the result is library `id`), for a page that walks the list newest
    // first and tests each entry's bit: about 2 ms for the 123 chunks of a million ids.
    await queryRunner.query(
      `CREATE AGGREGATE bookcase_bit_cat(varbit) (SFUNC = bitcat, STYPE = varbit, INITCOND = '')`,
    );
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_tokens_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        flips text;
        empty_tokens text[];
        empty_chunks integer[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          flips := $q$SELECT p.token, n.id, true AS approved, p.in_name
            FROM new_rows n, bookcase_search_tokens(n.search_text, lower(bookcase_unaccent(n.name))) p
            WHERE n.status = 'approved'$q$;
        ELSIF TG_OP = 'DELETE' THEN
          flips := $q$SELECT p.token, o.id, true AS approved, p.in_name
            FROM old_rows o, bookcase_search_tokens(o.search_text, lower(bookcase_unaccent(o.name))) p
            WHERE o.status = 'approved'$q$;
        ELSE
          -- What differs between the old approved tokens and the new approved ones: a token on one side only, or in
          -- the name on one side only. Rows whose status, text and name stay as they were cost a join.
          flips := $q$SELECT d.token, d.id, count(*) = 1 AS approved,
              count(*) FILTER (WHERE d.in_name) = 1 AS in_name
            FROM (
              SELECT p.token, o.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id,
                bookcase_search_tokens(o.search_text, lower(bookcase_unaccent(o.name))) p
              WHERE o.status = 'approved'
                AND (n.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                     OR n.name IS DISTINCT FROM o.name)
              UNION ALL
              SELECT p.token, n.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id,
                bookcase_search_tokens(n.search_text, lower(bookcase_unaccent(n.name))) p
              WHERE n.status = 'approved'
                AND (o.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                     OR n.name IS DISTINCT FROM o.name)
            ) d GROUP BY d.token, d.id$q$;
        END IF;
        EXECUTE format($s$
          WITH toggled AS (
            INSERT INTO library_search_tokens AS s (token, chunk, approved, in_name)
            SELECT f.token, f.id >> 13,
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.approved), '{}')),
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.in_name), '{}'))
            FROM (%s) f WHERE f.approved OR f.in_name
            GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (token, chunk) DO UPDATE
              SET approved = s.approved # excluded.approved, in_name = s.in_name # excluded.in_name
            RETURNING s.token, s.chunk, s.approved)
          SELECT array_agg(t.token), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
        $s$, flips) INTO empty_tokens, empty_chunks;
        IF empty_tokens IS NOT NULL THEN
          DELETE FROM library_search_tokens s
          USING unnest(empty_tokens, empty_chunks) AS e(token, chunk)
          WHERE s.token = e.token AND s.chunk = e.chunk AND bit_count(s.approved) = 0;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_tokens_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_tokens_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_tokens_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_tokens_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_tokens_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_tokens_sync()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_name_trgm_idx');
    await queryRunner.query('DROP TRIGGER libraries_search_tokens_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_search_tokens_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_search_tokens_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_search_tokens_sync()');
    await queryRunner.query('DROP AGGREGATE bookcase_bit_cat(varbit)');
    await queryRunner.query('DROP FUNCTION bookcase_search_tokenized(text)');
    await queryRunner.query('DROP FUNCTION bookcase_search_tokens(text, text)');
    await queryRunner.query('DROP TABLE library_search_tokens');
  }
}
