import type { MigrationInterface, QueryRunner } from 'typeorm';
import { LibraryMapCells1764600000000 } from './1764600000000-library-map-cells.js';

/** The finest precomputed level (cells of ~150 m) and its cells across the world, as in 1764600000000. */
const FINEST = 16;
const ACROSS = 2 ** (FINEST + 2);

/** The list's has_photo (LibrariesRepository's HAS_PHOTO) of the library row `alias`. */
const hasPhoto = (alias: string) =>
  `(${alias}.photo_key IS NOT NULL OR EXISTS (
     SELECT 1 FROM library_photos ph WHERE ph.library_id = ${alias}.id AND ph.status = 'approved'))`;

/**
 * The map's filtered feeds (issue 17, second part): the grid of library_map_cells gains two facets, the country and
 * whether the library has a photo (the list's `has_photo`: its own photo or an approved community photo). A cell
 * now has one row per (country, has_photo) present in it, so
 *
 * - an unfiltered view adds the rows of a cell up (it already summed partial rows per cell: nothing else changes);
 * - `country` and `has_photo`, the filters that match a large share of the libraries (a country holds up to 40 %
 *   of them, 80 % have a photo), are answered from the grid like the unfiltered feed: bounded by the cells in view,
 *   whatever the number of matching libraries.
 *
 * At 1M libraries the table grows from 1.63 M to ~2.0 M rows (most fine cells hold one library; coarse cells hold
 * both photo states). Kept exact as before by the triggers on `libraries` (a change of country or of the own photo
 * now also moves a library between rows) and by new ones on `library_photos` (a community photo approved, rejected
 * or deleted recounts its library's cells).
 */
export class MapCellFacets1765100000000 implements MigrationInterface {
  name = 'MapCellFacets1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('TRUNCATE library_map_cells');
    await queryRunner.query(`
      ALTER TABLE library_map_cells
        ADD COLUMN country character(2) NOT NULL,
        ADD COLUMN has_photo boolean NOT NULL,
        DROP CONSTRAINT library_map_cells_pkey,
        ADD PRIMARY KEY (level, cx, cy, country, has_photo)`);

    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION bookcase_map_cells_add(points jsonb) RETURNS void LANGUAGE sql AS $$
        INSERT INTO library_map_cells AS c
          (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
        SELECT g.level, bookcase_map_cell(bookcase_map_x(p.lng), g.level),
               bookcase_map_cell(bookcase_map_y(p.lat), g.level), p.country, p.photo,
               count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat), max(p.lng), max(p.lat), min(p.id)
        FROM jsonb_to_recordset(points)
               AS p(id integer, lng double precision, lat double precision, country character(2), photo boolean)
        CROSS JOIN generate_series(0, ${FINEST}) AS g(level)
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (level, cx, cy, country, has_photo) DO UPDATE SET
          count = c.count + excluded.count,
          sum_lng = c.sum_lng + excluded.sum_lng,
          sum_lat = c.sum_lat + excluded.sum_lat,
          min_lng = least(c.min_lng, excluded.min_lng),
          min_lat = least(c.min_lat, excluded.min_lat),
          max_lng = greatest(c.max_lng, excluded.max_lng),
          max_lat = greatest(c.max_lat, excluded.max_lat),
          min_id = least(c.min_id, excluded.min_id)
      $$`);

    // As in 1764600000000, with the facets: the finest cells from the libraries, coarser ones from their children.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION bookcase_map_cells_recount(cells jsonb) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        lvl integer;
      BEGIN
        CREATE TEMP TABLE IF NOT EXISTS bookcase_map_dirty (level smallint, cx integer, cy integer)
          ON COMMIT DROP;
        DELETE FROM bookcase_map_dirty;
        INSERT INTO bookcase_map_dirty
          SELECT DISTINCT ${FINEST}, d.cx, d.cy FROM jsonb_to_recordset(cells) AS d(cx integer, cy integer);
        DELETE FROM library_map_cells c USING bookcase_map_dirty d
          WHERE c.level = ${FINEST} AND c.cx = d.cx AND c.cy = d.cy;
        INSERT INTO library_map_cells
          (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
        SELECT ${FINEST}, d.cx, d.cy, p.country, p.photo, count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat),
               max(p.lng), max(p.lat), min(p.id)
        FROM bookcase_map_dirty d
        CROSS JOIN LATERAL (
          SELECT CASE WHEN d.cx = 0 THEN -180 ELSE d.cx / ${ACROSS}.0 * 360 - 180 - 1e-9 END AS west,
                 CASE WHEN d.cx = ${ACROSS - 1} THEN 180 ELSE (d.cx + 1) / ${ACROSS}.0 * 360 - 180 + 1e-9 END AS east,
                 CASE WHEN d.cy = 0 THEN 90
                      ELSE degrees(atan(sinh(pi() * (1 - 2 * d.cy / ${ACROSS}.0)))) + 1e-9 END AS north,
                 CASE WHEN d.cy = ${ACROSS - 1} THEN -90
                      ELSE degrees(atan(sinh(pi() * (1 - 2 * (d.cy + 1) / ${ACROSS}.0)))) - 1e-9 END AS south
        ) b
        JOIN LATERAL (
          SELECT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat, l.country,
                 ${hasPhoto('l')} AS photo
          FROM libraries l
          WHERE l.status = 'approved'
            AND point(ST_X(l.location::geometry), ST_Y(l.location::geometry))
                <@ box(point(b.west, b.south), point(b.east, b.north))
        ) p ON bookcase_map_cell(bookcase_map_x(p.lng), ${FINEST}) = d.cx
           AND bookcase_map_cell(bookcase_map_y(p.lat), ${FINEST}) = d.cy
        GROUP BY d.cx, d.cy, p.country, p.photo;
        FOR lvl IN REVERSE ${FINEST - 1}..0 LOOP
          INSERT INTO bookcase_map_dirty
            SELECT DISTINCT lvl, d.cx / 2, d.cy / 2 FROM bookcase_map_dirty d WHERE d.level = lvl + 1;
          DELETE FROM library_map_cells c USING bookcase_map_dirty d
            WHERE d.level = lvl AND c.level = lvl AND c.cx = d.cx AND c.cy = d.cy;
          INSERT INTO library_map_cells
            (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
          SELECT lvl, d.cx, d.cy, k.country, k.has_photo, sum(k.count), sum(k.sum_lng), sum(k.sum_lat),
                 min(k.min_lng), min(k.min_lat), max(k.max_lng), max(k.max_lat), min(k.min_id)
          FROM bookcase_map_dirty d
          JOIN library_map_cells k ON k.level = lvl + 1 AND k.cx BETWEEN d.cx * 2 AND d.cx * 2 + 1
                                  AND k.cy BETWEEN d.cy * 2 AND d.cy * 2 + 1
          WHERE d.level = lvl
          GROUP BY d.cx, d.cy, k.country, k.has_photo;
        END LOOP;
      END
      $$`);

    // As in 1764600000000; a row also leaves its place when its country or its own photo changes.
    const point = (alias: string, withFacets: boolean) =>
      `jsonb_build_object(${withFacets ? `'id', ${alias}.id, ` : ''}'lng', ST_X(${alias}.location::geometry),
         'lat', ST_Y(${alias}.location::geometry)${
           withFacets ? `, 'country', ${alias}.country, 'photo', ${hasPhoto(alias)}` : ''
         })`;
    const same = `o.id = n.id AND o.status = 'approved' AND n.status = 'approved'
      AND ST_X(o.location::geometry) = ST_X(n.location::geometry)
      AND ST_Y(o.location::geometry) = ST_Y(n.location::geometry)
      AND o.country = n.country AND (o.photo_key IS NULL) = (n.photo_key IS NULL)`;
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION bookcase_map_cells_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        added jsonb;
        removed jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT jsonb_agg(${point('n', true)}) INTO added FROM new_rows n WHERE n.status = 'approved';
        ELSIF TG_OP = 'DELETE' THEN
          SELECT jsonb_agg(${point('o', false)}) INTO removed FROM old_rows o WHERE o.status = 'approved';
        ELSE
          SELECT jsonb_agg(${point('n', true)}) INTO added FROM new_rows n
            WHERE n.status = 'approved' AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE ${same});
          SELECT jsonb_agg(${point('o', false)}) INTO removed FROM old_rows o
            WHERE o.status = 'approved' AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE ${same});
        END IF;
        IF added IS NULL AND removed IS NULL THEN
          RETURN NULL;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bookcase_map_cells'));
        IF removed IS NULL THEN
          PERFORM bookcase_map_cells_add(added);
        ELSE
          -- The recount reads the libraries as they are now, so it also covers rows added by this statement.
          PERFORM bookcase_map_cells_recount((
            SELECT jsonb_agg(jsonb_build_object(
                     'cx', bookcase_map_cell(bookcase_map_x((p ->> 'lng')::double precision), ${FINEST}),
                     'cy', bookcase_map_cell(bookcase_map_y((p ->> 'lat')::double precision), ${FINEST})))
            FROM jsonb_array_elements(removed || coalesce(added, '[]'::jsonb)) AS p));
        END IF;
        RETURN NULL;
      END
      $$`);

    // A community photo that becomes approved or stops being approved (or moves to another library) can change
    // its library's has_photo: the cells of those libraries (when approved) are recounted.
    const photoChanged = (from: string, to: string) =>
      `SELECT a.library_id FROM ${from} a WHERE a.status = 'approved' AND NOT EXISTS (
         SELECT 1 FROM ${to} b WHERE b.id = a.id AND b.library_id = a.library_id AND b.status = 'approved')`;
    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_cells_photos_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        touched integer[];
        cells jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(DISTINCT n.library_id) INTO touched FROM new_rows n WHERE n.status = 'approved';
        ELSIF TG_OP = 'DELETE' THEN
          SELECT array_agg(DISTINCT o.library_id) INTO touched FROM old_rows o WHERE o.status = 'approved';
        ELSE
          SELECT array_agg(DISTINCT c.library_id) INTO touched
            FROM (${photoChanged('new_rows', 'old_rows')} UNION ${photoChanged('old_rows', 'new_rows')}) c;
        END IF;
        IF touched IS NULL THEN
          RETURN NULL;
        END IF;
        SELECT jsonb_agg(jsonb_build_object(
                 'cx', bookcase_map_cell(bookcase_map_x(ST_X(l.location::geometry)), ${FINEST}),
                 'cy', bookcase_map_cell(bookcase_map_y(ST_Y(l.location::geometry)), ${FINEST})))
          INTO cells FROM libraries l WHERE l.id = ANY(touched) AND l.status = 'approved';
        IF cells IS NULL THEN
          RETURN NULL;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bookcase_map_cells'));
        PERFORM bookcase_map_cells_recount(cells);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER library_photos_map_cells_insert AFTER INSERT ON library_photos
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_map_cells_photos_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER library_photos_map_cells_update AFTER UPDATE ON library_photos
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_map_cells_photos_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER library_photos_map_cells_delete AFTER DELETE ON library_photos
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_map_cells_photos_sync()`);

    // The grid again, with the facets: every level from the libraries in one grouped statement.
    await queryRunner.query(`
      INSERT INTO library_map_cells
        (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
      SELECT g.level, bookcase_map_cell(bookcase_map_x(p.lng), g.level), bookcase_map_cell(bookcase_map_y(p.lat), g.level),
             p.country, p.photo, count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat), max(p.lng), max(p.lat),
             min(p.id)
      FROM (SELECT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat, l.country,
                   ${hasPhoto('l')} AS photo
            FROM libraries l WHERE l.status = 'approved') p
      CROSS JOIN generate_series(0, ${FINEST}) AS g(level)
      GROUP BY 1, 2, 3, 4, 5`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER library_photos_map_cells_delete ON library_photos');
    await queryRunner.query('DROP TRIGGER library_photos_map_cells_update ON library_photos');
    await queryRunner.query('DROP TRIGGER library_photos_map_cells_insert ON library_photos');
    await queryRunner.query('DROP FUNCTION bookcase_map_cells_photos_sync()');
    // The grid of 1764600000000 as that migration makes it (table, functions, triggers, contents).
    const previous = new LibraryMapCells1764600000000();
    await previous.down(queryRunner);
    await previous.up(queryRunner);
  }
}
