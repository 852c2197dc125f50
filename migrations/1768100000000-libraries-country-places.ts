import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * A country's approved libraries newest first with their places (issue 22, brief 22k): a `city` or `postal_code`
 * filter with `country` walks its country's libraries alone, index-only, instead of every library newest first
 * (libraries_approved_created_places_idx) or every matching value of the country one probe each. The walk reads
 * about (offset + limit) × the country's libraries ÷ the matches entries instead of × all libraries: at 1M
 * `country=NL&has_photo=true&postal_code=55&page_size=50` (1,087 of NL's 33,693) walks ~1,550 entries
 * where the list's walk would read ~46,000 (so it read NL's values one by one instead: 15–22 → 2.0 ms of backend CPU).
 * 49 MB, built in ~4 s at 1M under load. libraries_approved_country_created_idx (without the places) stays:
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
