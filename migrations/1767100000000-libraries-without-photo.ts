import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * The approved libraries without a primary photo, by id (issue 22, brief 22f: `has_photo` with `city` or
 * `postal_code`). A place filter's page and count read libraries from index entries that hold the places
 * (libraries_approved_created_places_idx, the places' own indexes) but not `photo_key`, so `has_photo` cost a heap
 * row per entry that passed the place: at 1M `has_photo=true&city=Køben&postal_code=80` read 10,843 heap pages for its
 * count (0.3 s), `country=NL&has_photo=true&postal_code=80` 1,495 buffers. A probe of this index (a fifth of the
 * approved libraries, ~4 MB) answers the primary photo of an approved library instead, index-only, and leaves
 * those scans index-only; a community photo is still one probe of library_photos' index.
 *
 * `id IS NOT NULL` (always true) keeps the index to those probes, whose `id = …` proves it: without it a list of
 * libraries without a photo (`has_photo=false`, which implies the rest of the predicate) read and sorted all 180k of
 * them through this index (1.4 s at 1M) instead of walking the newest-first index.
 *
 * Built `CONCURRENTLY` (brief 22b), so writes to `libraries` go on while it reads the table.
 */
export class LibrariesWithoutPhoto1767100000000 implements MigrationInterface {
  name = 'LibrariesWithoutPhoto1767100000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_without_photo_idx',
      `ON libraries (id) WHERE status = 'approved' AND photo_key IS NULL AND id IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_without_photo_idx');
  }
}
