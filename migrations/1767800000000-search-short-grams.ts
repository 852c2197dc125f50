import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, createUnlessExists, fillByChunk } from './chunked-fill.js';

/** Each table and the function that gives a library's keys (token, in_name) from its folded text and name. */
const TABLES = [
  ['library_search_grams', 'bookcase_search_grams'],
  ['library_search_triples', 'bookcase_search_triples'],
] as const;

/**
 * Substring `search` at a million libraries (issue 22), the substrings library_search_tokens (migration
 * 1767500000000) cannot count: those of one or two characters, and phrases of three space-separated parts.
 *
 * - `library_search_grams`: per substring of one or two characters without a space (a gram) and per chunk of 8,192
 *   library ids, the bitmaps of the approved libraries of the chunk whose folded text holds it (`approved`) and whose
 *   folded name does (`in_name`). A `search` of one or two folded characters is one gram: its matches are the gram's
 *   rows (at 1M, `10` was a read of every approved row, 1.1–2.1 s cold).
 * - `library_search_triples`: the same per window of three neighbouring space-separated tokens of the folded text (or
 *   name), as library_search_tokens keeps single tokens and pairs. A substring with exactly two spaces lies in one
 *   such window, so its matches are the OR of the rows of the windows that hold it, found through the table's
 *   trigram index (at 1M, `frankfurt am main`, 22,581 matches: 0.2–1.9 s through the libraries' trigram index).
 *   Windows over 200 characters are kept as pieces of 200 starting every 100, and only windows with three letters or
 *   digits in a row are kept (what bookcase_search_tripled accepts), as for tokens.
 *
 * Both are kept by the statement-level triggers of library_search_tokens' kind (bookcase_search_bits_sync, one
 * function for both tables: XOR of the changed bits, one grouped upsert in key order, empty rows deleted). Built
 * without blocking writes to `libraries` for long (brief 22f2): the tables, functions and triggers in one short
 * transaction, then each table filled through fillByChunk (migrations/chunked-fill.ts; a chunk's rows computed
 * without a lock, swapped in under a short SHARE lock on `libraries` if its libraries were not written meanwhile),
 * then the trigram index `CONCURRENTLY`. Not one transaction: a run interrupted part way leaves the structure, and
 * the next run fills every chunk again. (Its first version computed each chunk under SHARE: at 1M, 5–15 s quiet and
 * up to 40 s under load 20 of blocked writes per chunk.)
 */
export class SearchShortGrams1767800000000 implements MigrationInterface {
  name = 'SearchShortGrams1767800000000';
  /** Each chunk's fill commits on its own (see above). */
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createUnlessExists(queryRunner, 'library_search_grams', () =>
      createStructure(queryRunner),
    );
    for (const [table, keys] of TABLES) {
      // For its fill only: the rows of a chunk, to replace them (the primary key starts with the token).
      await createIndexConcurrently(queryRunner, `${table}_fill_idx`, `ON ${table} (chunk)`);
      await fillByChunk(queryRunner, {
        table,
        columns: 'token, chunk, approved, in_name',
        rows: `
          SELECT p.token, $1::int,
                 bookcase_search_bits(array_agg(l.id & 8191)),
                 bookcase_search_bits(coalesce(array_agg(l.id & 8191) FILTER (WHERE p.in_name), '{}'))
          FROM libraries l, ${keys}(l.search_text, lower(bookcase_unaccent(l.name))) p
          WHERE l.status = 'approved' AND l.id >= $1::int * 8192::bigint AND l.id < ($1::int + 1) * 8192::bigint
          GROUP BY 1 ORDER BY 1`,
      });
      await queryRunner.query(`DROP INDEX CONCURRENTLY ${table}_fill_idx`);
    }
    // Outside a transaction: writes to `libraries` (whose triggers write this table) go on while it is built.
    await createIndexConcurrently(
      queryRunner,
      'library_search_triples_trgm_idx',
      'ON library_search_triples USING gin (token gin_trgm_ops)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [table] of TABLES) {
      for (const op of ['insert', 'update', 'delete'])
        await queryRunner.query(`DROP TRIGGER ${table}_${op} ON libraries`);
      await queryRunner.query(`DROP TABLE ${table}`);
    }
    await queryRunner.query('DROP FUNCTION bookcase_search_bits_sync()');
    await queryRunner.query('DROP FUNCTION bookcase_search_tripled(text)');
    await queryRunner.query('DROP FUNCTION bookcase_search_gram(text)');
    await queryRunner.query('DROP FUNCTION bookcase_search_triples(text, text)');
    await queryRunner.query('DROP FUNCTION bookcase_search_grams(text, text)');
  }
}

/** The tables, their functions and triggers (the tables empty: fillByChunk fills them). */
async function createStructure(queryRunner: QueryRunner): Promise<void> {
  for (const [table] of TABLES) {
    // Compressed down to the smallest row, kept in the row, as library_search_tokens' rows are (most rows are
    // sparse: a rare gram, a window holding a house number and a postal code).
    await queryRunner.query(`
          CREATE TABLE ${table} (
            token text NOT NULL,
            chunk integer NOT NULL,
            approved bit(8192) NOT NULL,
            in_name bit(8192) NOT NULL,
            PRIMARY KEY (token, chunk)
          ) WITH (toast_tuple_target = 128)`);
    await queryRunner.query(`
          ALTER TABLE ${table} ALTER COLUMN approved SET STORAGE MAIN, ALTER COLUMN in_name SET STORAGE MAIN`);
  }
  // The distinct substrings of one and two characters without a space of a folded text and of its folded name:
  // its characters, and its pairs from the first and from the second character on (substr by position walks the
  // text from its start each time: 1.2 ms a library against 0.28).
  await queryRunner.query(`
        CREATE FUNCTION bookcase_search_grams(folded text, folded_name text)
        RETURNS TABLE (token text, in_name boolean)
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT g.token, bool_or(d.in_name)
          FROM (SELECT false AS in_name, folded AS t UNION ALL SELECT true, folded_name) d
          CROSS JOIN LATERAL (
            SELECT c AS token FROM string_to_table(d.t, NULL) c
            UNION ALL
            SELECT m[1] FROM regexp_matches(d.t, '..', 'g') m
            UNION ALL
            SELECT m[1] FROM regexp_matches(substr(d.t, 2), '..', 'g') m) g
          WHERE strpos(g.token, ' ') = 0
          GROUP BY g.token
        $$`);
  // The windows of three neighbouring tokens (split on single spaces, as bookcase_search_tokens splits) of a
  // folded text and of its folded name; a window over 200 characters as its pieces; only those with three
  // letters or digits in a row.
  await queryRunner.query(`
        CREATE FUNCTION bookcase_search_triples(folded text, folded_name text)
        RETURNS TABLE (token text, in_name boolean)
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT p.piece, bool_or(d.in_name)
          FROM (SELECT false AS in_name, string_to_array(folded, ' ') AS a
                UNION ALL
                SELECT true, string_to_array(folded_name, ' ')) d
          CROSS JOIN LATERAL (
            SELECT d.a[i] || ' ' || d.a[i + 1] || ' ' || d.a[i + 2] AS x
            FROM generate_subscripts(d.a, 1) i WHERE i + 2 <= cardinality(d.a)) t
          CROSS JOIN LATERAL (
            SELECT t.x AS piece WHERE char_length(t.x) <= 200
            UNION ALL
            SELECT substr(t.x, s, 200) FROM generate_series(1, char_length(t.x) - 99, 100) s
            WHERE char_length(t.x) > 200) p
          WHERE p.piece ~ '[[:alnum:]]{3}'
          GROUP BY p.piece
        $$`);
  // Whether a folded substring is one gram of library_search_grams, and whether library_search_triples counts it
  // (3 to 100 characters, two spaces, three letters or digits in a row). Immutable: PostgreSQL decides when it
  // plans a statement whose pattern is a constant.
  await queryRunner.query(`
        CREATE FUNCTION bookcase_search_gram(folded text) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT char_length(folded) BETWEEN 1 AND 2 AND strpos(folded, ' ') = 0
        $$`);
  await queryRunner.query(`
        CREATE FUNCTION bookcase_search_tripled(folded text) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT char_length(folded) BETWEEN 3 AND 100 AND cardinality(string_to_array(folded, ' ')) = 3
            AND folded ~ '[[:alnum:]]{3}'
        $$`);
  // bookcase_search_tokens_sync for any table of this layout: TG_ARGV[0] is the table, TG_ARGV[1] the function
  // that gives a library's keys (token, in_name) from its folded text and folded name.
  await queryRunner.query(`
        CREATE FUNCTION bookcase_search_bits_sync() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          keys text := quote_ident(TG_ARGV[1]);
          flips text;
          empty_tokens text[];
          empty_chunks integer[];
        BEGIN
          IF TG_OP = 'INSERT' THEN
            flips := format($q$SELECT p.token, n.id, true AS approved, p.in_name
              FROM new_rows n, %s(n.search_text, lower(bookcase_unaccent(n.name))) p
              WHERE n.status = 'approved'$q$, keys);
          ELSIF TG_OP = 'DELETE' THEN
            flips := format($q$SELECT p.token, o.id, true AS approved, p.in_name
              FROM old_rows o, %s(o.search_text, lower(bookcase_unaccent(o.name))) p
              WHERE o.status = 'approved'$q$, keys);
          ELSE
            -- What differs between the old approved keys and the new approved ones: a key on one side only, or in
            -- the name on one side only. Rows whose status, text and name stay as they were cost a join.
            flips := format($q$SELECT d.token, d.id, count(*) = 1 AS approved,
                count(*) FILTER (WHERE d.in_name) = 1 AS in_name
              FROM (
                SELECT p.token, o.id, p.in_name
                FROM old_rows o JOIN new_rows n ON n.id = o.id,
                  %1$s(o.search_text, lower(bookcase_unaccent(o.name))) p
                WHERE o.status = 'approved'
                  AND (n.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                       OR n.name IS DISTINCT FROM o.name)
                UNION ALL
                SELECT p.token, n.id, p.in_name
                FROM old_rows o JOIN new_rows n ON n.id = o.id,
                  %1$s(n.search_text, lower(bookcase_unaccent(n.name))) p
                WHERE n.status = 'approved'
                  AND (o.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                       OR n.name IS DISTINCT FROM o.name)
              ) d GROUP BY d.token, d.id$q$, keys);
          END IF;
          EXECUTE format($s$
            WITH toggled AS (
              INSERT INTO %1$I AS s (token, chunk, approved, in_name)
              SELECT f.token, f.id >> 13,
                     bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.approved), '{}')),
                     bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.in_name), '{}'))
              FROM (%2$s) f WHERE f.approved OR f.in_name
              GROUP BY 1, 2 ORDER BY 1, 2
              ON CONFLICT (token, chunk) DO UPDATE
                SET approved = s.approved # excluded.approved, in_name = s.in_name # excluded.in_name
              RETURNING s.token, s.chunk, s.approved)
            SELECT array_agg(t.token), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
          $s$, TG_ARGV[0], flips) INTO empty_tokens, empty_chunks;
          IF empty_tokens IS NOT NULL THEN
            EXECUTE format($d$
              DELETE FROM %I s USING unnest($1, $2) AS e(token, chunk)
              WHERE s.token = e.token AND s.chunk = e.chunk AND bit_count(s.approved) = 0
            $d$, TG_ARGV[0]) USING empty_tokens, empty_chunks;
          END IF;
          RETURN NULL;
        END
        $$`);
  for (const [table, keys] of TABLES) {
    const args = `'${table}', '${keys}'`;
    await queryRunner.query(`
          CREATE TRIGGER ${table}_insert AFTER INSERT ON libraries
          REFERENCING NEW TABLE AS new_rows
          FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_bits_sync(${args})`);
    await queryRunner.query(`
          CREATE TRIGGER ${table}_update AFTER UPDATE ON libraries
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
          FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_bits_sync(${args})`);
    await queryRunner.query(`
          CREATE TRIGGER ${table}_delete AFTER DELETE ON libraries
          REFERENCING OLD TABLE AS old_rows
          FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_bits_sync(${args})`);
  }
}
