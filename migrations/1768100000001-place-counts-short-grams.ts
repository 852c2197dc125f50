import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * A country's place values (library_city_counts, library_postal_code_counts) that contain one or two given
 * characters (issue 22, brief 22k). The page of a place filter of one or two characters with `country`, when its
 * matches are few, reads its matching values one by one (placeCountAndPageQuery, valuesOf); no trigram narrows so
 * short a text, so it read every value of the country from library_*_counts_country_idx and tested each: at 1M
 * `country=GB&postal_code=10` (113 libraries) tested all 68,976 GB postal codes, 12–23 ms of backend CPU. These GIN
 * indexes hold each value's distinct substrings of one and two characters (the city lower-cased, as the filter and
 * library_place_grams fold it), each prefixed with the value's country (`GB10`), so the matching values of a country
 * are one index lookup. Nothing keeps them but PostgreSQL: they are expression indexes of the count tables, which the
 * triggers already keep (exact under writes as any index is).
 *
 * Built `CONCURRENTLY` (brief 22b): the count tables are small (206,797 postal codes at 1M).
 */
export class PlaceCountsShortGrams1768100000001 implements MigrationInterface {
  name = 'PlaceCountsShortGrams1768100000001';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    // The country followed by each distinct substring of one or two characters of `value` (none for an empty value).
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION bookcase_short_grams(country char(2), value text) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(DISTINCT country || substr(value, i, n)), '{}')
        FROM generate_series(1, 2) AS n, generate_series(1, char_length(value) - n + 1) AS i
      $$`);
    await createIndexConcurrently(
      queryRunner,
      'library_postal_code_counts_grams_idx',
      'ON library_postal_code_counts USING gin (bookcase_short_grams(country, postal_code))',
    );
    await createIndexConcurrently(
      queryRunner,
      'library_city_counts_grams_idx',
      'ON library_city_counts USING gin (bookcase_short_grams(country, lower(city)))',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX library_city_counts_grams_idx');
    await queryRunner.query('DROP INDEX library_postal_code_counts_grams_idx');
    await queryRunner.query('DROP FUNCTION bookcase_short_grams(character, text)');
  }
}
