import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The finest precomputed level (cells of ~150 m) and its cells across the world, as in 1764600000000. */
const FINEST = 16;
const ACROSS = 2 ** (FINEST + 2);

/** The list's has_photo of the library row `alias`, as in 1765100000000. */
const hasPhoto = (alias: string) =>
  `(${alias}.photo_key IS NOT NULL OR EXISTS (
     SELECT 1 FROM library_photos ph WHERE ph.library_id = ${alias}.id AND ph.status = 'approved'))`;

/**
 * The recount's definition: `planned` is this migration's; without it, 1765100000000's (for `down`), whose dirty
 * cells are added level by level, never analysed, and whose libraries are joined by the cell expressions.
 */
function recount(planned: boolean): string {
  const fill = planned
    ? `-- A cell at a coarser level is its finest cell's ancestor: the finest index shifted right.
        INSERT INTO bookcase_map_dirty
          SELECT DISTINCT g.level, d.cx >> (${FINEST} - g.level), d.cy >> (${FINEST} - g.level)
          FROM jsonb_to_recordset(cells) AS d(cx integer, cy integer)
          CROSS JOIN generate_series(0, ${FINEST}) AS g(level);
        ANALYZE bookcase_map_dirty;`
    : `INSERT INTO bookcase_map_dirty
          SELECT DISTINCT ${FINEST}, d.cx, d.cy FROM jsonb_to_recordset(cells) AS d(cx integer, cy integer);`;
  const libraries = `SELECT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat, l.country,
                 ${hasPhoto('l')} AS photo
          FROM libraries l
          WHERE l.status = 'approved'
            AND point(ST_X(l.location::geometry), ST_Y(l.location::geometry))
                <@ box(point(b.west, b.south), point(b.east, b.north))`;
  const inCell = `bookcase_map_cell(bookcase_map_x(p.lng), ${FINEST}) = d.cx
           AND bookcase_map_cell(bookcase_map_y(p.lat), ${FINEST}) = d.cy`;
  const joined = planned
    ? `CROSS JOIN LATERAL (
          ${libraries}
          OFFSET 0
        ) p
        WHERE d.level = ${FINEST}
          AND ${inCell}`
    : `JOIN LATERAL (
          ${libraries}
        ) p ON ${inCell}`;
  const ancestors = planned
    ? ''
    : `INSERT INTO bookcase_map_dirty
            SELECT DISTINCT lvl, d.cx / 2, d.cy / 2 FROM bookcase_map_dirty d WHERE d.level = lvl + 1;`;
  return `
      CREATE OR REPLACE FUNCTION bookcase_map_cells_recount(cells jsonb) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        lvl integer;
      BEGIN
        CREATE TEMP TABLE IF NOT EXISTS bookcase_map_dirty (level smallint, cx integer, cy integer)
          ON COMMIT DROP;
        DELETE FROM bookcase_map_dirty;
        ${fill}
        DELETE FROM library_map_cells c USING bookcase_map_dirty d
          WHERE d.level = ${FINEST} AND c.level = ${FINEST} AND c.cx = d.cx AND c.cy = d.cy;
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
        ${joined}
        GROUP BY d.cx, d.cy, p.country, p.photo;
        FOR lvl IN REVERSE ${FINEST - 1}..0 LOOP
          ${ancestors}
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
      $$`;
}

/**
 * The map grid's recount (1765100000000's bookcase_map_cells_recount) read every approved library at 1M.
 *
 * The recount runs whenever an approved library stops being approved, moves, changes country or photo, or a community
 * photo is approved or withdrawn. Its finest cells came from a temporary table that had no statistics, so PostgreSQL
 * assumed 2,140 dirty cells. It then joined them to `libraries` by a merge join on the cell expressions, sorting all
 * 900,000 approved libraries. Rejecting one library took 7.7–9.3 s in this trigger (EXPLAIN ANALYZE at the 1M seed).
 *
 * Now:
 * - The temporary table receives every level's dirty cells at once and is ANALYZEd, so every statement of the recount
 *   is planned for the real handful of cells.
 * - The libraries of a dirty cell are read by a LATERAL subquery that cannot be flattened (OFFSET 0): one box probe
 *   of libraries_approved_point_idx per cell, whatever the estimates. The exact cell test follows as before.
 *
 * Same counts, same locking (the caller's advisory lock). Measured at 1M: the trigger 9,256 → 34 ms.
 */
export class MapCellsRecountPlan1766900000000 implements MigrationInterface {
  name = 'MapCellsRecountPlan1766900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(recount(true));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(recount(false));
  }
}
