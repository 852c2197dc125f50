import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Open data: the versions of the GeoJSON export and the lease of its periodic job, plus the contributor agreement
 * each user accepted.
 *
 * - `scheduled_tasks`: one row per periodic task (today only `libraries-export`). An instance claims a due row with
 *   `FOR UPDATE SKIP LOCKED` and holds it with a lease (`locked_until`, `lease_id`), as enrichment jobs are claimed.
 * - `export_versions`: one row per generated version; `building` rows are a run in progress (or one that crashed,
 *   cleaned up by the next run), `published` rows are served. Files live in media storage under the keys stored.
 * - `libraries_approved_id_idx`: the export reads approved libraries in id order, in keyset batches.
 */
export class OpenData1764800000000 implements MigrationInterface {
  name = 'OpenData1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE scheduled_tasks (
        name varchar(64) PRIMARY KEY,
        next_run_at timestamptz NOT NULL,
        locked_until timestamptz,
        lease_id uuid,
        last_started_at timestamptz,
        last_finished_at timestamptz,
        last_outcome varchar(32) NOT NULL DEFAULT '',
        last_error varchar(200) NOT NULL DEFAULT ''
      )
    `);
    await queryRunner.query(`
      CREATE TABLE export_versions (
        id serial PRIMARY KEY,
        status varchar(16) NOT NULL CHECK (status IN ('building', 'published')),
        file_stem varchar(100) NOT NULL UNIQUE,
        generated_at timestamptz NOT NULL,
        record_count integer NOT NULL DEFAULT 0,
        geojson_key varchar(255) NOT NULL,
        geojson_bytes bigint NOT NULL DEFAULT 0,
        geojson_sha256 char(64),
        gz_key varchar(255) NOT NULL,
        gz_bytes bigint NOT NULL DEFAULT 0,
        gz_sha256 char(64),
        metadata_key varchar(255) NOT NULL,
        metadata_bytes bigint NOT NULL DEFAULT 0,
        metadata_sha256 char(64)
      )
    `);
    await queryRunner.query(
      'CREATE INDEX export_versions_status_generated_idx ON export_versions (status, generated_at DESC, id DESC)',
    );
    await queryRunner.query(
      "CREATE INDEX libraries_approved_id_idx ON libraries (id) WHERE status = 'approved'",
    );
    await queryRunner.query(`
      CREATE TABLE contributor_agreements (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        version varchar(64) NOT NULL,
        channel varchar(16) NOT NULL CHECK (channel IN ('api', 'console')),
        accepted_at timestamptz NOT NULL,
        UNIQUE (user_id, version)
      )
    `);
    await queryRunner.query(
      'CREATE INDEX contributor_agreements_user_accepted_idx ON contributor_agreements (user_id, accepted_at DESC, id DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE contributor_agreements');
    await queryRunner.query('DROP INDEX libraries_approved_id_idx');
    await queryRunner.query('DROP TABLE export_versions');
    await queryRunner.query('DROP TABLE scheduled_tasks');
  }
}
