import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `q` at a million libraries, deep pages (issue 22, brief 22w): `bookcase_search_walk(lexemes, country, name_part,
 * reach)`, the newest `reach` approved libraries among a `q` list's matches (its name matches, or its other matches),
 * for a list whose matches library_search_bitmaps (and library_country_bitmaps) hold exactly. It reads the matches'
 * bitmaps once, end to end as one `bytea` (a library's bit is `get_bit(bits, id # 7)`: varbit_send gives a chunk's
 * bitmap with bit `id & 8191` counted from the left, bytea's get_bit counts from the right of each byte), and walks
 * the narrowest index of the list's order testing each entry's bit: half the CPU per entry of a walk that tests its
 * tsvector in libraries_approved_created_search_idx, whose wide entries are also most of its cost (at 1M, `köln` page
 * 6: 33,491 entries, 12–14 → 6 pg CPU-ms). With `country`, that country's index alone, index-only, where the tsvector
 * walk read a heap row per entry (`q=köln&country=DE` page 5: 107 → 4.6 ms).
 *
 * A function rather than a subquery of the list's statement: PL/pgSQL plans its two statements once per session, and
 * only when a part is walked this way; as subqueries they cost every `q` statement about 0.6–0.9 ms more planning
 * (each reference to `libraries` weighs its 25 indexes), more than they saved on average. Bits past the last chunk with
 * a match are not stored, hence the length test.
 */
export class SearchBitWalk1767000000000 implements MigrationInterface {
  name = 'SearchBitWalk1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION bookcase_search_walk(lexemes text[], in_country character(2), name_part boolean, reach integer)
      RETURNS TABLE (library_id integer, library_created_at timestamptz)
      LANGUAGE plpgsql STABLE AS $fn$
      DECLARE
        bits bytea;
      BEGIN
        SELECT string_agg(y.gap || y.part_bits, ''::bytea ORDER BY y.chunk) INTO bits
        FROM (SELECT m.chunk,
                     decode(repeat('00', 1024 * (m.chunk - coalesce(lag(m.chunk) OVER (ORDER BY m.chunk), -1) - 1)),
                            'hex') AS gap,
                     substring(varbit_send(CASE WHEN name_part THEN m.named ELSE m.matched & ~m.named END) FROM 5)
                       AS part_bits
              FROM (SELECT x.chunk, bit_and(x.approved) AS matched, bit_and(x.in_name) AS named FROM (
                      SELECT s.chunk, s.approved, s.in_name FROM library_search_bitmaps s
                      WHERE s.prefix = ANY (lexemes)
                      UNION ALL
                      SELECT k.chunk, k.approved, k.approved FROM library_country_bitmaps k
                      WHERE k.country = in_country) x
                    GROUP BY x.chunk
                    HAVING count(*) = cardinality(lexemes) + (in_country IS NOT NULL)::int) m) y;
        IF bits IS NULL THEN
          RETURN;
        END IF;
        -- The LIMIT of no effect keeps the test above the ordered walk (see list-query.ts, textPageQuery). With a
        -- country, its own index (libraries_approved_country_created_idx): only its libraries are walked.
        IF in_country IS NULL THEN
          RETURN QUERY
            SELECT l.id, l.created_at FROM (
              SELECT l.id, l.created_at FROM libraries l WHERE l.status = 'approved'
              ORDER BY l.created_at DESC, l.id DESC LIMIT (SELECT 9007199254740991::bigint)) l
            WHERE CASE WHEN (l.id >> 3) < octet_length(bits) THEN get_bit(bits, l.id # 7) = 1 ELSE false END
            ORDER BY l.created_at DESC, l.id DESC LIMIT reach;
        ELSE
          RETURN QUERY
            SELECT l.id, l.created_at FROM (
              SELECT l.id, l.created_at FROM libraries l WHERE l.status = 'approved' AND l.country = in_country
              ORDER BY l.created_at DESC, l.id DESC LIMIT (SELECT 9007199254740991::bigint)) l
            WHERE CASE WHEN (l.id >> 3) < octet_length(bits) THEN get_bit(bits, l.id # 7) = 1 ELSE false END
            ORDER BY l.created_at DESC, l.id DESC LIMIT reach;
        END IF;
      END
      $fn$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'DROP FUNCTION bookcase_search_walk(text[], character, boolean, integer)',
    );
  }
}
