import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * The approved libraries without a primary photo by country, newest first (issue 22, brief 22e: `country` with
 * `has_photo=false` and no place filter). Such a list walked its country's newest-first index, fetching each row to
 * test its photo, for about five rows per match (a fifth of the libraries have no primary photo): at 1M
 * `country=ES&has_photo=false&page_size=50&page=16` read 3,883 rows (3,414 buffers, 15 ms of backend CPU warm) for
 * its 50. This index (~180k entries, 7 MB) gives the matches alone, in the list's order; a community photo is still
 * one probe of library_photos' index per row. Without a country the same index over all countries was not chosen
 * (PostgreSQL costs the heap fetches of its scattered rows above walking every approved row in the heap's order,
 * which is cheap when warm), so there is none.
 *
 * Built `CONCURRENTLY` (brief 22b), so writes to `libraries` go on while it reads the table (at 1M: 4–9 s under load).
 */
export class LibrariesWithoutPhotoByCountry1768002000000 implements MigrationInterface {
  name = 'LibrariesWithoutPhotoByCountry1768002000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_without_photo_country_created_idx',
      `ON libraries (country, created_at DESC, id DESC) WHERE status = 'approved' AND photo_key IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_without_photo_country_created_idx');
  }
}
