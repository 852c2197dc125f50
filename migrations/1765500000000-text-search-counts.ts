import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `q` at a million libraries (issue 22): exact totals without counting, and a page order that an index gives.
 *
 * - `library_search_prefixes`: per word prefix (1–24 characters of a lexeme of `search_vector`), how many approved
 *   libraries have a lexeme starting with it (`approved`) and how many have one in the name (`in_name`). A `q` of one
 *   word is a prefix query (`'word':*`), so its total and its count of name matches are one row of this table.
 *   Counting them from `libraries` read every match's heap row (at 1M: `books`, 410,553 matches, 4 s cold). Kept by
 *   statement-level triggers like `library_counts`: one grouped upsert per statement, in prefix order (concurrent
 *   writers lock common prefixes in the same order and never deadlock on them). A library contributes each of its
 *   prefixes once (about 110 rows per library of the seed).
 * - `libraries_approved_created_search_idx`: approved libraries newest first with their `search_vector`, so a page of
 *   a common word walks the index alone (no heap row per candidate) and stops after the page.
 * - `libraries_approved_name_vector_idx`: the name's own vector, so the name matches of a rarer word are found
 *   without reading the libraries that match only in the description.
 */
export class TextSearchCounts1765500000000 implements MigrationInterface {
  name = 'TextSearchCounts1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE library_search_prefixes (
        prefix text PRIMARY KEY,
        -- No CHECK (>= 0): PostgreSQL checks the proposed row of an upsert, whose delta may be negative.
        approved integer NOT NULL,
        in_name integer NOT NULL
      )`);
    // The distinct prefixes of a vector's lexemes (up to 24 characters; list-query.ts SEARCH_PREFIX_MAX_CHARS) and
    // whether one of the lexemes giving it is in the name (weight A).
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_prefixes(vector tsvector) RETURNS TABLE (prefix text, in_name boolean)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT left(u.lexeme, n), bool_or('A' = ANY (u.weights))
        FROM unnest(vector) u, generate_series(1, least(char_length(u.lexeme), 24)) n
        GROUP BY 1
      $$`);
    // +1 per prefix of every approved vector a statement produced, −1 per prefix of every approved vector it
    // removed; an update that changes neither the status nor the vector of a row costs nothing.
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_prefixes_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO library_search_prefixes AS s (prefix, approved, in_name)
          SELECT p.prefix, count(*), count(*) FILTER (WHERE p.in_name)
          FROM new_rows n, bookcase_search_prefixes(n.search_vector) p WHERE n.status = 'approved'
          GROUP BY 1 ORDER BY 1
          ON CONFLICT (prefix) DO UPDATE
            SET approved = s.approved + excluded.approved, in_name = s.in_name + excluded.in_name;
        ELSE
          INSERT INTO library_search_prefixes AS s (prefix, approved, in_name)
          SELECT p.prefix, -count(*), -count(*) FILTER (WHERE p.in_name)
          FROM old_rows o, bookcase_search_prefixes(o.search_vector) p WHERE o.status = 'approved'
          GROUP BY 1 ORDER BY 1
          ON CONFLICT (prefix) DO UPDATE
            SET approved = s.approved + excluded.approved, in_name = s.in_name + excluded.in_name;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_prefixes_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO library_search_prefixes AS s (prefix, approved, in_name)
        SELECT p.prefix, sum(d.delta), coalesce(sum(d.delta) FILTER (WHERE p.in_name), 0)
        FROM (
          SELECT o.search_vector AS vector, -1 AS delta FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE o.status = 'approved'
            AND (n.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
          UNION ALL
          SELECT n.search_vector, 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE n.status = 'approved'
            AND (o.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
        ) d, bookcase_search_prefixes(d.vector) p
        GROUP BY 1
        HAVING sum(d.delta) <> 0 OR coalesce(sum(d.delta) FILTER (WHERE p.in_name), 0) <> 0
        ORDER BY 1
        ON CONFLICT (prefix) DO UPDATE
          SET approved = s.approved + excluded.approved, in_name = s.in_name + excluded.in_name;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_prefixes_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_prefixes_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_prefixes_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_prefixes_update()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_search_prefixes_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_search_prefixes_sync()`);
    await queryRunner.query(`
      CREATE INDEX libraries_approved_name_vector_idx ON libraries
      USING gin (to_tsvector('simple', bookcase_unaccent(name::text))) WHERE status = 'approved'`);
    await queryRunner.query(`
      CREATE INDEX libraries_approved_created_search_idx ON libraries (created_at DESC, id DESC)
      INCLUDE (search_vector) WHERE status = 'approved'`);
    // Under the table lock, so no write can slip between the fill and the triggers.
    await queryRunner.query('LOCK TABLE libraries IN SHARE MODE');
    await queryRunner.query(`
      INSERT INTO library_search_prefixes (prefix, approved, in_name)
      SELECT p.prefix, count(*), count(*) FILTER (WHERE p.in_name)
      FROM libraries l, bookcase_search_prefixes(l.search_vector) p
      WHERE l.status = 'approved' GROUP BY 1`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_created_search_idx');
    await queryRunner.query('DROP INDEX libraries_approved_name_vector_idx');
    await queryRunner.query('DROP TRIGGER libraries_search_prefixes_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_search_prefixes_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_search_prefixes_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_search_prefixes_update()');
    await queryRunner.query('DROP FUNCTION bookcase_search_prefixes_sync()');
    await queryRunner.query('DROP FUNCTION bookcase_search_prefixes(tsvector)');
    await queryRunner.query('DROP TABLE library_search_prefixes');
  }
}
