import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The finest precomputed level (cells of ~150 m) and its cells across the world. */
const FINEST = 16;
const ACROSS = 2 ** (FINEST + 2);

/**
 * The map's clusters (issue 17), precomputed: for every grid level 0…16 the approved libraries of each non-empty
 * cell (count, coordinate sums for the centroid, extent, smallest id). A cell of level L is a quarter of a zoom-L
 * tile (Web Mercator, 2^(L+2) cells across the world), so a zoom-L map view reads at most a few hundred rows of
 * level L instead of every library in view. Kept exact by statement-level triggers on `libraries`:
 *
 * - rows that become approved (insert, approval, move) are added to their 17 cells in one grouped upsert per
 *   statement, which keeps bulk imports and the seed cheap;
 * - when any approved row leaves a cell (rejection, deletion, move), the level-16 cells it touched are recounted
 *   from the libraries themselves (a cell is ~150 m wide, a GiST box lookup), and each coarser level from its four
 *   children, so extents and smallest ids stay exact;
 * - maintenance takes a transaction-level advisory lock, so concurrent writers never recount a cell from a
 *   snapshot that misses another's change.
 *
 * The cell arithmetic lives in the IMMUTABLE SQL functions below, which PostgreSQL inlines; MapRepository computes
 * the same cells in TypeScript for the ranges of a request (src/map/map-grid.ts).
 */
export class LibraryMapCells1764600000000 implements MigrationInterface {
  name = 'LibraryMapCells1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_x(lng double precision) RETURNS double precision
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT (lng + 180.0) / 360.0 $$`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_y(lat double precision) RETURNS double precision
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT 0.5 - ln(tan(pi() / 4 + radians(least(85.0511287798066, greatest(-85.0511287798066, lat))) / 2))
                         / (2 * pi()) $$`);
    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_cell(v double precision, level integer) RETURNS integer
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT least(greatest(floor(v * power(2.0::double precision, level + 2)), 0),
                         power(2.0::double precision, level + 2) - 1)::integer $$`);

    await queryRunner.query(`
      CREATE TABLE library_map_cells (
        level smallint NOT NULL,
        cx integer NOT NULL,
        cy integer NOT NULL,
        count integer NOT NULL CHECK (count > 0),
        sum_lng double precision NOT NULL,
        sum_lat double precision NOT NULL,
        min_lng double precision NOT NULL,
        min_lat double precision NOT NULL,
        max_lng double precision NOT NULL,
        max_lat double precision NOT NULL,
        min_id integer NOT NULL,
        PRIMARY KEY (level, cx, cy)
      )`);
    // Rows of cells (one cy, a range of cx): the primary key serves columns (one cx, a range of cy).
    await queryRunner.query(
      'CREATE INDEX library_map_cells_row_idx ON library_map_cells (level, cy, cx)',
    );

    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_cells_add(points jsonb) RETURNS void LANGUAGE sql AS $$
        INSERT INTO library_map_cells AS c
          (level, cx, cy, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
        SELECT g.level, bookcase_map_cell(bookcase_map_x(p.lng), g.level),
               bookcase_map_cell(bookcase_map_y(p.lat), g.level),
               count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat), max(p.lng), max(p.lat), min(p.id)
        FROM jsonb_to_recordset(points) AS p(id integer, lng double precision, lat double precision)
        CROSS JOIN generate_series(0, ${FINEST}) AS g(level)
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (level, cx, cy) DO UPDATE SET
          count = c.count + excluded.count,
          sum_lng = c.sum_lng + excluded.sum_lng,
          sum_lat = c.sum_lat + excluded.sum_lat,
          min_lng = least(c.min_lng, excluded.min_lng),
          min_lat = least(c.min_lat, excluded.min_lat),
          max_lng = greatest(c.max_lng, excluded.max_lng),
          max_lat = greatest(c.max_lat, excluded.max_lat),
          min_id = least(c.min_id, excluded.min_id)
      $$`);

    // Recounts the given finest cells from the approved libraries, then their ancestors from their children.
    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_cells_recount(cells jsonb) RETURNS void LANGUAGE plpgsql AS $$
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
          (level, cx, cy, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
        SELECT ${FINEST}, d.cx, d.cy, count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat), max(p.lng), max(p.lat),
               min(p.id)
        FROM bookcase_map_dirty d
        CROSS JOIN LATERAL (
          -- The cell's box in degrees, widened by a hair (the exact cell test follows); the outermost cells reach
          -- the poles and the antimeridian, where the grid clamps.
          SELECT CASE WHEN d.cx = 0 THEN -180 ELSE d.cx / ${ACROSS}.0 * 360 - 180 - 1e-9 END AS west,
                 CASE WHEN d.cx = ${ACROSS - 1} THEN 180 ELSE (d.cx + 1) / ${ACROSS}.0 * 360 - 180 + 1e-9 END AS east,
                 CASE WHEN d.cy = 0 THEN 90
                      ELSE degrees(atan(sinh(pi() * (1 - 2 * d.cy / ${ACROSS}.0)))) + 1e-9 END AS north,
                 CASE WHEN d.cy = ${ACROSS - 1} THEN -90
                      ELSE degrees(atan(sinh(pi() * (1 - 2 * (d.cy + 1) / ${ACROSS}.0)))) - 1e-9 END AS south
        ) b
        JOIN LATERAL (
          SELECT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat
          FROM libraries l
          WHERE l.status = 'approved'
            AND point(ST_X(l.location::geometry), ST_Y(l.location::geometry))
                <@ box(point(b.west, b.south), point(b.east, b.north))
        ) p ON bookcase_map_cell(bookcase_map_x(p.lng), ${FINEST}) = d.cx
           AND bookcase_map_cell(bookcase_map_y(p.lat), ${FINEST}) = d.cy
        GROUP BY d.cx, d.cy;
        FOR lvl IN REVERSE ${FINEST - 1}..0 LOOP
          INSERT INTO bookcase_map_dirty
            SELECT DISTINCT lvl, d.cx / 2, d.cy / 2 FROM bookcase_map_dirty d WHERE d.level = lvl + 1;
          DELETE FROM library_map_cells c USING bookcase_map_dirty d
            WHERE d.level = lvl AND c.level = lvl AND c.cx = d.cx AND c.cy = d.cy;
          INSERT INTO library_map_cells
            (level, cx, cy, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
          SELECT lvl, d.cx, d.cy, sum(k.count), sum(k.sum_lng), sum(k.sum_lat), min(k.min_lng), min(k.min_lat),
                 max(k.max_lng), max(k.max_lat), min(k.min_id)
          FROM bookcase_map_dirty d
          JOIN library_map_cells k ON k.level = lvl + 1 AND k.cx BETWEEN d.cx * 2 AND d.cx * 2 + 1
                                  AND k.cy BETWEEN d.cy * 2 AND d.cy * 2 + 1
          WHERE d.level = lvl
          GROUP BY d.cx, d.cy;
        END LOOP;
      END
      $$`);

    // One trigger function for the three statements: `added` are approved rows that are new at their place,
    // `removed` approved rows that are no longer approved there.
    await queryRunner.query(`
      CREATE FUNCTION bookcase_map_cells_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        added jsonb;
        removed jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT jsonb_agg(jsonb_build_object('id', n.id, 'lng', ST_X(n.location::geometry),
                                              'lat', ST_Y(n.location::geometry)))
            INTO added FROM new_rows n WHERE n.status = 'approved';
        ELSIF TG_OP = 'DELETE' THEN
          SELECT jsonb_agg(jsonb_build_object('lng', ST_X(o.location::geometry), 'lat', ST_Y(o.location::geometry)))
            INTO removed FROM old_rows o WHERE o.status = 'approved';
        ELSE
          SELECT jsonb_agg(jsonb_build_object('id', n.id, 'lng', ST_X(n.location::geometry),
                                              'lat', ST_Y(n.location::geometry)))
            INTO added FROM new_rows n
            WHERE n.status = 'approved' AND NOT EXISTS (
              SELECT 1 FROM old_rows o WHERE o.id = n.id AND o.status = 'approved'
                AND ST_X(o.location::geometry) = ST_X(n.location::geometry)
                AND ST_Y(o.location::geometry) = ST_Y(n.location::geometry));
          SELECT jsonb_agg(jsonb_build_object('lng', ST_X(o.location::geometry), 'lat', ST_Y(o.location::geometry)))
            INTO removed FROM old_rows o
            WHERE o.status = 'approved' AND NOT EXISTS (
              SELECT 1 FROM new_rows n WHERE n.id = o.id AND n.status = 'approved'
                AND ST_X(o.location::geometry) = ST_X(n.location::geometry)
                AND ST_Y(o.location::geometry) = ST_Y(n.location::geometry));
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
    await queryRunner.query(`
      CREATE TRIGGER libraries_map_cells_insert AFTER INSERT ON libraries
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_map_cells_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_map_cells_update AFTER UPDATE ON libraries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION bookcase_map_cells_sync()`);
    await queryRunner.query(`
      CREATE TRIGGER libraries_map_cells_delete AFTER DELETE ON libraries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookcase_map_cells_sync()`);

    await queryRunner.query(`
      SELECT bookcase_map_cells_add(coalesce(jsonb_agg(jsonb_build_object(
        'id', id, 'lng', ST_X(location::geometry), 'lat', ST_Y(location::geometry))), '[]'::jsonb))
      FROM libraries WHERE status = 'approved'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER libraries_map_cells_delete ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_map_cells_update ON libraries');
    await queryRunner.query('DROP TRIGGER libraries_map_cells_insert ON libraries');
    await queryRunner.query('DROP FUNCTION bookcase_map_cells_sync()');
    await queryRunner.query('DROP FUNCTION bookcase_map_cells_recount(jsonb)');
    await queryRunner.query('DROP FUNCTION bookcase_map_cells_add(jsonb)');
    await queryRunner.query('DROP TABLE library_map_cells');
    await queryRunner.query('DROP FUNCTION bookcase_map_cell(double precision, integer)');
    await queryRunner.query('DROP FUNCTION bookcase_map_y(double precision)');
    await queryRunner.query('DROP FUNCTION bookcase_map_x(double precision)');
  }
}
