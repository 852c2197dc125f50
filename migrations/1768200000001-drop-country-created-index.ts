import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * libraries_approved_country_created_idx (country, created_at DESC, id DESC) dropped (issue 22, brief 22f): every
 * statement that read it (a country's list newest first, its walk of index entries on later pages, `q`'s walk of a
 * country in bookcase_search_bit_walk) reads libraries_approved_country_created_places_idx instead (migration
 * 1768100000000: the same keys, the places included), in the same order and with the same plan. At 1M, EXPLAIN
 * (ANALYZE, BUFFERS) on the generic plans with and without it: `country=DE` pages 1 and 2 25 and 115 buffers either
 * way, page 10 of 50 587 → 590, `country=NL&has_photo=true&page=4` 177 either way, `q=berlin&country=DE&page=2`
 * 1,928 → 1,938, `q=library&country=GB&page=5` 609 → 610. It took 44 MB and a write per approved library's insert
 * or change of country or date.
 *
 * Dropped `CONCURRENTLY` (brief 22b), so reads and writes of `libraries` go on meanwhile.
 */
export class DropCountryCreatedIndex1768200000001 implements MigrationInterface {
  name = 'DropCountryCreatedIndex1768200000001';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'DROP INDEX CONCURRENTLY IF EXISTS libraries_approved_country_created_idx',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_country_created_idx',
      `ON libraries (country, created_at DESC, id DESC) WHERE status = 'approved'`,
    );
  }
}
