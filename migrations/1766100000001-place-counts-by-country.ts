import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The place counts (library_city_counts, library_postal_code_counts, migration 1765550000000) by country (issue 22,
 * list-filters). A place filter with `country` reads the matching values of that country: for one or two characters
 * no trigram index narrows them, so PostgreSQL read all 206,797 postal codes at 1M (a parallel sequential scan, 1,400
 * buffers, 25–130 ms: `country=AT&postal_code=69`); by country it reads that country's entries alone, index-only
 * (144 buffers, 0.5 ms). The counts are included for the values' `approved > 0` and the sums.
 */
export class PlaceCountsByCountry1766100000001 implements MigrationInterface {
  name = 'PlaceCountsByCountry1766100000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX library_postal_code_counts_country_idx ON library_postal_code_counts (country, postal_code)
      INCLUDE (approved, with_photo)`);
    await queryRunner.query(`
      CREATE INDEX library_city_counts_country_idx ON library_city_counts (country, city)
      INCLUDE (approved, with_photo)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX library_city_counts_country_idx');
    await queryRunner.query('DROP INDEX library_postal_code_counts_country_idx');
  }
}
