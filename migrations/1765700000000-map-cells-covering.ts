import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Every column the map reads from a cell's row besides the keys: the index answers alone (an index-only scan). */
const PAYLOAD = 'count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id';

/**
 * The map reads library_map_cells by rows of cells (`library_map_cells_row_idx`: level, cy, cx) and by columns of
 * cells (the primary key: level, cx, cy, …). The table's rows lie in the order the seeding and the triggers wrote
 * them, so each cell row read cost a heap page of its own: a country-size view at 1M libraries read ~1,200 buffers
 * for ~550 cell rows (issue 17, fourth session). Both indexes now carry the payload, so PostgreSQL answers those
 * reads from the index's leaf pages alone (where the visibility map says the heap pages are all visible, as
 * autovacuum keeps them): a row of cells is one or two leaf pages.
 *
 * The primary key keeps its key columns (the triggers' ON CONFLICT infers it from them).
 */
export class MapCellsCovering1765700000000 implements MigrationInterface {
  name = 'MapCellsCovering1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE library_map_cells
        DROP CONSTRAINT library_map_cells_pkey,
        ADD PRIMARY KEY (level, cx, cy, country, has_photo) INCLUDE (${PAYLOAD})`);
    await queryRunner.query('DROP INDEX library_map_cells_row_idx');
    await queryRunner.query(
      `CREATE INDEX library_map_cells_row_idx ON library_map_cells (level, cy, cx)
         INCLUDE (country, has_photo, ${PAYLOAD})`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX library_map_cells_row_idx');
    await queryRunner.query(
      'CREATE INDEX library_map_cells_row_idx ON library_map_cells (level, cy, cx)',
    );
    await queryRunner.query(`
      ALTER TABLE library_map_cells
        DROP CONSTRAINT library_map_cells_pkey,
        ADD PRIMARY KEY (level, cx, cy, country, has_photo)`);
  }
}
