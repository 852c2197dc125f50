import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A table of approved libraries per distinct value of one column of `libraries` (and country). */
interface PlaceCounts {
  table: string;
  column: string;
  type: string;
  /** What the list's substring filter matches, of the row `alias` ('r.'; city: case-insensitive). */
  matched: (alias: string) => string;
  /**
   * The btree index of the libraries of one value, newest first: a page reads one range of it per value. It holds
   * the other place (`other`), so a list filtered by both reads one of them index-only.
   */
  pageIndex: string;
  other: string;
}

const PLACES: PlaceCounts[] = [
  {
    table: 'library_city_counts',
    column: 'city',
    type: 'character varying(100)',
    matched: (alias) => `lower(${alias}city)`,
    pageIndex: 'libraries_approved_city_created_idx',
    other: 'postal_code',
  },
  {
    table: 'library_postal_code_counts',
    column: 'postal_code',
    type: 'character varying(20)',
    matched: (alias) => `${alias}postal_code`,
    pageIndex: 'libraries_approved_postal_code_created_idx',
    other: 'city',
  },
];

const photo = (alias: string, sign: '' | '-') =>
  `CASE WHEN ${alias}.photo_key IS NULL THEN 0 ELSE ${sign}1 END`;

/** +1 per approved row of `rows` (or −1 with sign '-'), per value and country. */
const delta = (place: PlaceCounts, rows: string, sign: '' | '-') =>
  `SELECT r.${place.column} AS key, r.country, ${sign}1 AS approved, ${photo('r', sign)} AS with_photo
   FROM ${rows} r WHERE r.status = 'approved'`;

/**
 * The same per distinct substring of one or two characters of each place (counted once per library): a filter that
 * short matches too many distinct values (`postal_code=10`: 25,246 of 206,797 at 1M) for their trigram index, which
 * needs three characters, so its count is one row per country here.
 */
const gramDelta = (place: PlaceCounts, rows: string, sign: '' | '-') =>
  `SELECT '${place.column}' || ':' || g.gram AS key, r.country, ${sign}1 AS approved,
          ${photo('r', sign)} AS with_photo
   FROM ${rows} r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(${place.matched('r.')}, i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(${place.matched('r.')}) - n + 1) AS i) g
   WHERE r.status = 'approved'`;

const GRAMS = { table: 'library_place_grams', column: 'gram' };

/** The grouped upsert of one statement's deltas (`source`: key, country, approved, with_photo) into `table`. */
const upsert = (target: { table: string; column: string }, source: string) => `
  INSERT INTO ${target.table} AS c (${target.column}, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (${source}) d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (${target.column}, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;`;

type Delta = (rows: string, sign: '' | '-') => string;

/** Every table's upsert of one statement: `source` combines a table's deltas of the transition tables. */
const sync = (source: (delta: Delta) => string) =>
  [
    ...PLACES.map((place) =>
      upsert(
        place,
        source((rows, sign) => delta(place, rows, sign)),
      ),
    ),
    upsert(
      GRAMS,
      PLACES.map((place) => source((rows, sign) => gramDelta(place, rows, sign))).join(
        ' UNION ALL ',
      ),
    ),
  ].join('\n');

/**
 * The list's `city` and `postal_code` filters (issue 22, brief 22f): approved libraries (and those with a primary
 * photo) per distinct city and country, and per distinct postal code and country, kept exact by statement-level
 * triggers on `libraries` like library_counts (1765400000000). A substring filter is matched against these few
 * distinct values (trigram index) instead of against every library, whose trigram index rechecked each match's heap
 * row (at 1M libraries `city=Ber`, 78,869 matches, 1.5 s cold; `postal_code=10`, 136,632, 1.1 s):
 *
 * - the count of a list filtered by one of them (with `country`, `has_photo`) is the sum over the matching values;
 * - its page, newest first, reads the newest libraries of each matching value from the btree indexes below and
 *   merges them (a few index ranges), or, when very many values match, walks the list's newest-first index;
 * - other combinations rewrite the substring into `= ANY(matching values)`.
 *
 * Rows that reach 0 stay (readers skip them), as in library_counts.
 */
export class LibraryPlaceCounts1765550000000 implements MigrationInterface {
  name = 'LibraryPlaceCounts1765550000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const place of PLACES) {
      await queryRunner.query(`
        CREATE TABLE ${place.table} (
          ${place.column} ${place.type} NOT NULL,
          country char(2) NOT NULL,
          -- No CHECK (approved >= 0): PostgreSQL checks the proposed row of an upsert, whose delta may be negative.
          approved integer NOT NULL,
          with_photo integer NOT NULL,
          PRIMARY KEY (${place.column}, country)
        )`);
      await queryRunner.query(
        `CREATE INDEX ${place.table}_trgm_idx ON ${place.table} USING gin (${place.matched('')} gin_trgm_ops)`,
      );
      await queryRunner.query(
        `CREATE INDEX ${place.pageIndex} ON libraries (${place.column}, country, created_at DESC, id DESC)
         INCLUDE (${place.other}) WHERE status = 'approved'`,
      );
    }
    // `gram` is the place's column name, a colon and the substring (`postal_code:10`).
    await queryRunner.query(`
      CREATE TABLE ${GRAMS.table} (
        gram character varying(40) NOT NULL,
        country char(2) NOT NULL,
        approved integer NOT NULL,
        with_photo integer NOT NULL,
        PRIMARY KEY (gram, country)
      )`);
    // A dense substring's page walks the list newest first and stops after the page: the places in the index make
    // that walk index-only (a postal code's page at 1M: 8 ms and 125 heap pages cold through
    // libraries_status_created_idx, 0.1 ms and no heap page here).
    await queryRunner.query(`
      CREATE INDEX libraries_approved_created_places_idx ON libraries (created_at DESC, id DESC)
      INCLUDE (country, city, postal_code) WHERE status = 'approved'`);
    // A country's page newest first (also under `has_photo`): a small country's page walked the whole list's index
    // (or read and sorted all its rows: `country=CZ`, 11,249 libraries, page 3 at 1M: 180–580 ms cold).
    await queryRunner.query(`
      CREATE INDEX libraries_approved_country_created_idx ON libraries (country, created_at DESC, id DESC)
      WHERE status = 'approved'`);
    const both = (rows: string, sign: '' | '-') => (delta: Delta) => delta(rows, sign);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_library_place_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          ${sync(both('new_rows', ''))}
        ELSIF TG_OP = 'DELETE' THEN
          ${sync(both('old_rows', '-'))}
        ELSE
          ${sync((delta) => `${delta('old_rows', '-')} UNION ALL ${delta('new_rows', '')}`)}
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_place_counts_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_place_counts_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_place_counts_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_place_counts_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_place_counts_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_library_place_counts_sync()`);
    // Under the table lock, so no write can slip between the fill and the triggers.
    await queryRunner.query('LOCK TABLE libraries IN SHARE MODE');
    for (const statement of sync(both('libraries', ''))
      .split(';')
      .filter((s) => s.trim()))
      await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER libraries_place_counts_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_place_counts_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_place_counts_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_library_place_counts_sync()');
    await queryRunner.query('DROP INDEX libraries_approved_country_created_idx');
    await queryRunner.query('DROP INDEX libraries_approved_created_places_idx');
    await queryRunner.query(`DROP TABLE ${GRAMS.table}`);
    for (const place of PLACES) {
      await queryRunner.query(`DROP INDEX ${place.pageIndex}`);
      await queryRunner.query(`DROP TABLE ${place.table}`);
    }
  }
}
