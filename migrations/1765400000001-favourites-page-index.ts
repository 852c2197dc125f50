import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The favourites page orders by (created_at DESC, library_id DESC): with `library_id` in the index, PostgreSQL takes
 * the whole order from it and stops after the page, instead of joining every favourite and sorting (issue 22). The
 * old index is a prefix of the new one.
 */
export class FavouritesPageIndex1765400000001 implements MigrationInterface {
  name = 'FavouritesPageIndex1765400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX favourites_user_created_idx');
    await queryRunner.query(
      'CREATE INDEX favourites_user_created_idx ON favourites (user_id, created_at DESC, library_id DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX favourites_user_created_idx');
    await queryRunner.query(
      'CREATE INDEX favourites_user_created_idx ON favourites (user_id, created_at DESC)',
    );
  }
}
