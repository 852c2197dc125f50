import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from './chunked-fill.js';

/**
 * The approved libraries without a primary photo, newest first (issue 22, brief 22x: `has_photo=false` without
 * `country` or a place filter). The list's page walks index entries only (list-query.ts, newestWalkQuery): with a
 * country libraries_approved_without_photo_country_created_idx (migration 1768002000000), without one this index
 * (~180k entries at 1M, ~6 MB). Without it the walk read every approved library newest first, about five per match
 * (a fifth have no primary photo), each a heap row for its `photo_key`. Migration 1768002000000 found the same index
 * unused by the plain page (PostgreSQL costed its scattered heap rows above the walk of every row); the page's walk
 * now reads ids and dates alone, an index-only scan here.
 *
 * Built `CONCURRENTLY` (brief 22b), so writes to `libraries` go on while it reads the table.
 */
export class LibrariesWithoutPhotoNewest1768110000000 implements MigrationInterface {
  name = 'LibrariesWithoutPhotoNewest1768110000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'libraries_approved_without_photo_created_idx',
      `ON libraries (created_at DESC, id DESC) WHERE status = 'approved' AND photo_key IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_without_photo_created_idx');
  }
}
