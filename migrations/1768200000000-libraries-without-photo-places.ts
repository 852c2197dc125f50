import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * The approved libraries without a primary photo by place, newest first (issue 22, brief 22f: `has_photo=false` with
 * `city` or `postal_code`). A place filter's page by value (or, for both places, by pair) reads the newest libraries
 * of each matching value from the place's btree; with has_photo=false it read every library of the value and probed
 * libraries_approved_without_photo_idx for each, though four in five have a primary photo and none of those matches.
 * From these indexes it reads only the libraries without one (a fifth of the approved libraries: ~8 MB each at 1M),
 * index-only, and probes library_photos for each. At 100k `has_photo=false&postal_code=800` 1.3 → 0.8 backend
 * CPU-ms, `has_photo=false&city=Stoc&page_size=50&page=14` 1.5 → 0.7. The postal code's index holds the city (as
 * libraries_approved_postal_code_created_idx does) for the pairs of both places.
 *
 * Built `CONCURRENTLY` (brief 22b), so writes to `libraries` go on while it reads the table.
 */
export class LibrariesWithoutPhotoPlaces1768200000000 implements MigrationInterface {
  name = 'LibrariesWithoutPhotoPlaces1768200000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_without_photo_postal_code_created_idx',
      `ON libraries (postal_code, country, created_at DESC, id DESC) INCLUDE (city)
       WHERE status = 'approved' AND photo_key IS NULL`,
    );
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_without_photo_city_created_idx',
      `ON libraries (city, country, created_at DESC, id DESC) INCLUDE (postal_code)
       WHERE status = 'approved' AND photo_key IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_without_photo_city_created_idx');
    await queryRunner.query('DROP INDEX libraries_approved_without_photo_postal_code_created_idx');
  }
}
