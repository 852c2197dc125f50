import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Nearest first from an index that stays cheap far from any library (issue 22, proximity-random).
 *
 * A proximity page was ordered by `location <-> point` on libraries_location_idx (geography GiST). From a point far
 * from every library (the sea, a desert: 40 % of the bench's random points) that KNN walk read almost the whole index
 * before its first row: at 1M libraries 12,000–24,000 buffers and 100–830 ms for 20 rows. The geography `<->` is the
 * distance on a sphere (PostGIS computes KNN on the sphere, not the spheroid), and on a sphere the straight-line
 * (chord) distance between unit vectors grows with the great-circle distance, so ordering by the 3D distance of
 * unit vectors gives the same order. `bookcase_unit_vector` is that vector (geocentric, unit sphere) as a 3D point,
 * and the partial n-D GiST index of approved libraries serves `<<->>` nearest first: the same page from ~150 buffers
 * (measured at 1M, see bench/README.md, "Session 7, issue-22p"). PostGIS is named by schema in the body, as in
 * bookcase_unaccent: an index expression is computed again by a restore, whose search_path is empty.
 */
export class ProximityUnitVector1766100000000 implements MigrationInterface {
  name = 'ProximityUnitVector1766100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION bookcase_unit_vector(g geography) RETURNS geometry
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT public.ST_MakePoint(
                cos(radians(public.ST_Y(g::public.geometry))) * cos(radians(public.ST_X(g::public.geometry))),
                cos(radians(public.ST_Y(g::public.geometry))) * sin(radians(public.ST_X(g::public.geometry))),
                sin(radians(public.ST_Y(g::public.geometry)))) $$`);
    await queryRunner.query(`
      CREATE INDEX libraries_approved_unit_vector_idx ON libraries
      USING gist (bookcase_unit_vector(location) gist_geometry_ops_nd) WHERE status = 'approved'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX libraries_approved_unit_vector_idx');
    await queryRunner.query('DROP FUNCTION bookcase_unit_vector(geography)');
  }
}
