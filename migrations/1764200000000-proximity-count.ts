import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Counting the approved libraries within a radius reads this index alone. The key is the plain point (longitude,
 * latitude) so a box narrows the candidates, and `location` is included so the exact distance test needs no heap
 * fetch (GiST's point opclass supports index-only scans; the geography opclass does not). See
 * LibrariesRepository.searchConditions.
 */
export class ProximityCount1764200000000 implements MigrationInterface {
  name = 'ProximityCount1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX libraries_approved_point_idx ON libraries
       USING gist ((point(ST_X(location::geometry), ST_Y(location::geometry)))) INCLUDE (location)
       WHERE status = 'approved'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX libraries_approved_point_idx`);
  }
}
