import type { MigrationInterface, QueryRunner } from 'typeorm';

/** +1 per approved row of `rows` (or −1 with sign '-'), per city, postal code and country. */
const delta = (rows: string, sign: '' | '-') =>
  `SELECT r.city, r.postal_code, r.country, ${sign}1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE ${sign}1 END AS with_photo
   FROM ${rows} r WHERE r.status = 'approved'`;

/** The grouped upsert of one statement's deltas into library_place_pairs. */
const upsert = (source: string) => `
  INSERT INTO library_place_pairs AS c (city, country, postal_code, approved, with_photo)
  SELECT d.city, d.country, d.postal_code, sum(d.approved), sum(d.with_photo) FROM (${source}) d
  GROUP BY 1, 2, 3 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (city, country, postal_code) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;`;

/**
 * A list filtered by both `city` and `postal_code` (issue 22, brief 22l): approved libraries (and those with a primary
 * photo) per distinct city, postal code and country, kept exact by statement-level triggers on `libraries` like the
 * place counts (1765550000000). Both places' count was linear in the smaller place's libraries, read from its btree
 * index once for the count and again for the page (at 1M `country=DE&city=Hambur&postal_code=60`: 1,300 postal codes,
 * 27,000 index entries, 50,000 buffers); here it is one row per pair (a city's postal codes are one range of the
 * primary key, a postal code's cities one entry of the second index), and the page reads the libraries of the
 * matching pairs only. Rows that reach 0 stay (readers skip them), as in the other counts.
 */
export class LibraryPlacePairs1767700000000 implements MigrationInterface {
  name = 'LibraryPlacePairs1767700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // No CHECK (approved >= 0): PostgreSQL checks the proposed row of an upsert, whose delta may be negative.
    await queryRunner.query(`
      CREATE TABLE library_place_pairs (
        city character varying(100) NOT NULL,
        country char(2) NOT NULL,
        postal_code character varying(20) NOT NULL,
        approved integer NOT NULL,
        with_photo integer NOT NULL,
        PRIMARY KEY (city, country, postal_code) INCLUDE (approved, with_photo)
      )`);
    await queryRunner.query(`
      CREATE INDEX library_place_pairs_postal_code_idx ON library_place_pairs (postal_code, country)
      INCLUDE (city, approved, with_photo)`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_library_place_pairs_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          ${upsert(delta('new_rows', ''))}
        ELSIF TG_OP = 'DELETE' THEN
          ${upsert(delta('old_rows', '-'))}
        ELSE
          ${upsert(`${delta('old_rows', '-')} UNION ALL ${delta('new_rows', '')}`)}
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_place_pairs_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_place_pairs_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_place_pairs_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_place_pairs_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_place_pairs_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_place_pairs_sync()`);
    // Under the table lock, so no write can slip between the fill and the triggers.
    await queryRunner.query('LOCK TABLE libraries IN SHARE MODE');
    await queryRunner.query(upsert(delta('libraries', '')));
    await queryRunner.query('ANALYZE library_place_pairs');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER libraries_place_pairs_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_place_pairs_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_place_pairs_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_library_place_pairs_sync()');
    await queryRunner.query('DROP TABLE library_place_pairs');
  }
}
