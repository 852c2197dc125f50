import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exact counts of approved libraries (and of those with a primary photo) per country and UTC day of `created_at`,
 * and per country (issue 22), kept by statement-level triggers on `libraries`. They answer, in a few hundred rows whatever the size of the table: the count of the default
 * list, of a country's list and of `has_photo` lists (plus the few approved libraries whose only photos are approved
 * community photos, read through library_photos' index), `GET /libraries/countries/`, and the statistics' totals, top
 * countries and cumulative series. Counting those from `libraries` walked every approved row (at 1M libraries 52–66 ms for a list count,
 * 72 ms for the countries and most of the statistics' 866 ms), so they had to be memoised and could lag writes.
 *
 * Each statement adds +1 for every approved row it produces and −1 for every approved row it removes (insert,
 * approval, rejection, deletion, a change of country or creation date), grouped per (country, day) in one upsert:
 * bulk imports and the seed pay one grouped upsert per statement, and concurrent writers serialise only on the rows
 * of the same country and day, never losing an increment. Rows that reach 0 stay (readers skip them).
 */
export class LibraryCounts1765400000000 implements MigrationInterface {
  name = 'LibraryCounts1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE library_counts (
        country char(2) NOT NULL,
        day date NOT NULL,
        -- No CHECK (approved >= 0): PostgreSQL checks the proposed row of an upsert, whose delta may be negative.
        approved integer NOT NULL,
        with_photo integer NOT NULL,
        PRIMARY KEY (country, day)
      )`);
    // Per country (the sum of its days): what list counts and the countries read, a few hundred rows at most.
    await queryRunner.query(`
      CREATE TABLE library_country_counts (
        country char(2) PRIMARY KEY,
        approved integer NOT NULL,
        with_photo integer NOT NULL
      )`);
    // The statistics' series reads by day across countries.
    await queryRunner.query(
      'CREATE INDEX library_counts_day_idx ON library_counts (day) INCLUDE (approved, with_photo)',
    );
    // `delta` is +1 per approved row the statement produced and −1 per approved row it removed, per country and
    // day; both tables take the same grouped upsert (a statement that changes no count changes no row).
    await queryRunner.query(`
      CREATE FUNCTION bookcase_library_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        CREATE TEMP TABLE IF NOT EXISTS bookcase_counts_delta
          (country char(2), day date, approved integer, with_photo integer) ON COMMIT DROP;
        DELETE FROM bookcase_counts_delta;
        IF TG_OP = 'INSERT' THEN
          INSERT INTO bookcase_counts_delta
          SELECT n.country, (n.created_at AT TIME ZONE 'UTC')::date, count(*),
                 count(*) FILTER (WHERE n.photo_key IS NOT NULL)
          FROM new_rows n WHERE n.status = 'approved' GROUP BY 1, 2;
        ELSIF TG_OP = 'DELETE' THEN
          INSERT INTO bookcase_counts_delta
          SELECT o.country, (o.created_at AT TIME ZONE 'UTC')::date, -count(*),
                 -count(*) FILTER (WHERE o.photo_key IS NOT NULL)
          FROM old_rows o WHERE o.status = 'approved' GROUP BY 1, 2;
        ELSE
          INSERT INTO bookcase_counts_delta
          SELECT d.country, d.day, sum(d.delta), sum(d.photo)
          FROM (SELECT o.country, (o.created_at AT TIME ZONE 'UTC')::date AS day, -1 AS delta,
                       CASE WHEN o.photo_key IS NULL THEN 0 ELSE -1 END AS photo
                FROM old_rows o WHERE o.status = 'approved'
                UNION ALL
                SELECT n.country, (n.created_at AT TIME ZONE 'UTC')::date, 1,
                       CASE WHEN n.photo_key IS NULL THEN 0 ELSE 1 END
                FROM new_rows n WHERE n.status = 'approved') d
          GROUP BY 1, 2 HAVING sum(d.delta) <> 0 OR sum(d.photo) <> 0;
        END IF;
        INSERT INTO library_counts AS c (country, day, approved, with_photo)
        SELECT country, day, approved, with_photo FROM bookcase_counts_delta ORDER BY 1, 2
        ON CONFLICT (country, day) DO UPDATE
          SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        INSERT INTO library_country_counts AS c (country, approved, with_photo)
        SELECT country, sum(approved), sum(with_photo) FROM bookcase_counts_delta
        GROUP BY 1 HAVING sum(approved) <> 0 OR sum(with_photo) <> 0 ORDER BY 1
        ON CONFLICT (country) DO UPDATE
          SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_counts_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_counts_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_counts_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_counts_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_counts_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_counts_sync()`);
    // Under the table lock, so no write can slip between the fill and the triggers.
    await queryRunner.query('LOCK TABLE libraries IN SHARE MODE');
    await queryRunner.query(`
      INSERT INTO library_counts (country, day, approved, with_photo)
      SELECT country, (created_at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE photo_key IS NOT NULL)
      FROM libraries WHERE status = 'approved' GROUP BY 1, 2`);
    await queryRunner.query(`
      INSERT INTO library_country_counts (country, approved, with_photo)
      SELECT country, sum(approved), sum(with_photo) FROM library_counts GROUP BY 1`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER libraries_counts_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_counts_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_counts_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_library_counts_sync()');
    await queryRunner.query('DROP TABLE library_country_counts');
    await queryRunner.query('DROP TABLE library_counts');
  }
}
