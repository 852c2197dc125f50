import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `favourites.library_approved`: whether the favourited library is approved, kept by triggers (issue 22). The
 * favourites page and its count only ever show approved libraries, so they read a partial index of approved
 * favourites in the page's order: the count is a scan of the user's entries in that index, and the page joins
 * `libraries` for its own rows only. Before, both joined `libraries` for every favourite (a user with 50 favourites:
 * 100 index probes and ~400 buffers per request, all to filter on the library's status).
 *
 * The flag is set from the library when a favourite is inserted, and follows the library's status when it changes
 * (a status change is rare: an approval, a rejection; it touches that library's favourites only). Deleting a
 * library deletes its favourites (the foreign key cascades). The insert's trigger reads the library's row FOR SHARE,
 * so a favourite added while the library's status changes can never keep the old status.
 */
export class FavouritesApproved1765800000000 implements MigrationInterface {
  name = 'FavouritesApproved1765800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE favourites ADD COLUMN library_approved boolean NOT NULL DEFAULT false',
    );
    await queryRunner.query(`
      UPDATE favourites f SET library_approved = true
      FROM libraries l WHERE l.id = f.library_id AND l.status = 'approved'`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_favourite_library_approved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- FOR SHARE waits for a concurrent status change of the library and reads its outcome; a status change
        -- that starts after this waits for the favourite's commit and then updates it.
        NEW.library_approved := coalesce(
          (SELECT l.status = 'approved' FROM libraries l WHERE l.id = NEW.library_id FOR SHARE), false);
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER favourites_library_approved
      BEFORE INSERT OR UPDATE OF library_id ON favourites
      FOR EACH ROW EXECUTE FUNCTION bookcase_favourite_library_approved()`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_library_status_favourites() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE favourites SET library_approved = (NEW.status = 'approved')
        WHERE library_id = NEW.id AND library_approved IS DISTINCT FROM (NEW.status = 'approved');
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_status_favourites
      AFTER UPDATE OF status ON libraries
      FOR EACH ROW WHEN ((OLD.status = 'approved') IS DISTINCT FROM (NEW.status = 'approved'))
      EXECUTE FUNCTION bookcase_library_status_favourites()`);
    await queryRunner.query('DROP INDEX favourites_user_created_idx');
    await queryRunner.query(`
      CREATE INDEX favourites_user_approved_idx ON favourites (user_id, created_at DESC, library_id DESC)
      WHERE library_approved`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX favourites_user_approved_idx');
    await queryRunner.query(
      'CREATE INDEX favourites_user_created_idx ON favourites (user_id, created_at DESC, library_id DESC)',
    );
    await queryRunner.query('DROP TRIGGER libraries_status_favourites ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_library_status_favourites()');
    await queryRunner.query('DROP TRIGGER favourites_library_approved ON favourites');
    await queryRunner.query('DROP FUNCTION bookcase_favourite_library_approved()');
    await queryRunner.query('ALTER TABLE favourites DROP COLUMN library_approved');
  }
}
