import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * A country's approved libraries newest first with their places (issue 22, brief 22k): a `city` or `postal_code`
 * filter with `country` walks its country's libraries alone, index-only, instead of every library newest first
 * (libraries_approved_created_places_idx) or every matching value of the country one probe each. The walk reads
 * about (offset + limit) × the country's libraries ÷ the matches entries instead of × all libraries: at 1M
 * `country=GB&postal_code=10` (FILLED IN BELOW). libraries_approved_country_created_idx (without the places) stays:
 * the country lists and `q`'s country walk read it, a third smaller.
 *
 * Built `CONCURRENTLY` (brief 22b), so writes to `libraries` go on while it reads the table.
 */
export class LibrariesCountryPlaces1768100000000 implements MigrationInterface {
  name = 'LibrariesCountryPlaces1768100000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_country_created_places_idx',
      `ON libraries (country, created_at DESC, id DESC) INCLUDE (city, postal_code) WHERE status = 'approved'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_country_created_places_idx');
  }
}
