import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Map contribution: one record per library, an append-only event history (a trigger refuses UPDATE and DELETE),
 * and the write switch state (allow_write_api confirmation, a 401 disabling writes until the token changes).
 */
export class MapContribution1764000000000 implements MigrationInterface {
  name = 'MapContribution1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE map_contributions (
        id serial PRIMARY KEY,
        library_id integer NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        status varchar(20) NOT NULL DEFAULT 'unchecked',
        checked_at timestamptz NULL,
        last_check_failed boolean NOT NULL DEFAULT false,
        duplicate_candidates jsonb NOT NULL DEFAULT '[]',
        resolved_different jsonb NOT NULL DEFAULT '[]',
        mapdb_element_type varchar(8) NULL,
        mapdb_element_id bigint NULL,
        changeset_id bigint NULL,
        contributed_at timestamptz NULL,
        contributed_by integer NULL REFERENCES users(id) ON DELETE SET NULL,
        last_attempt_key uuid NULL,
        last_error_code varchar(64) NOT NULL DEFAULT '',
        last_error_message text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT map_contributions_library_key UNIQUE (library_id),
        CONSTRAINT map_contributions_attempt_key UNIQUE (last_attempt_key),
        CONSTRAINT map_contributions_status_check CHECK (status IN
          ('unchecked', 'no_match', 'possible_duplicate', 'already_present', 'submitting', 'contributed', 'failed')),
        CONSTRAINT map_contributions_element_type_check
          CHECK (mapdb_element_type IS NULL OR mapdb_element_type IN ('node', 'way', 'relation')),
        CONSTRAINT map_contributions_element_pair_check
          CHECK ((mapdb_element_type IS NULL) = (mapdb_element_id IS NULL))
      )`);
    // A map feature satisfies at most one library contribution.
    await queryRunner.query(`
      CREATE UNIQUE INDEX map_contributions_element_key ON map_contributions (mapdb_element_type, mapdb_element_id)
      WHERE mapdb_element_id IS NOT NULL`);
    await queryRunner.query(
      'CREATE INDEX map_contributions_status_idx ON map_contributions (status)',
    );

    // actor_id carries no foreign key on purpose: a referential action would UPDATE this append-only table.
    await queryRunner.query(`
      CREATE TABLE map_contribution_events (
        id bigserial PRIMARY KEY,
        contribution_id integer NOT NULL REFERENCES map_contributions(id),
        library_id integer NOT NULL,
        event_type varchar(40) NOT NULL,
        outcome varchar(20) NOT NULL,
        actor_id integer NULL,
        actor_username varchar(150) NULL,
        attempt_key uuid NULL,
        details jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX map_contribution_events_contribution_idx ON map_contribution_events (contribution_id, id)',
    );
    await queryRunner.query(`
      CREATE FUNCTION map_contribution_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'map_contribution_events is append-only';
      END $fn$`);
    await queryRunner.query(`
      CREATE TRIGGER map_contribution_events_append_only
      BEFORE UPDATE OR DELETE ON map_contribution_events
      FOR EACH ROW EXECUTE FUNCTION map_contribution_events_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER map_contribution_events_no_truncate
      BEFORE TRUNCATE ON map_contribution_events
      FOR EACH STATEMENT EXECUTE FUNCTION map_contribution_events_append_only()`);

    // One row: what is known about the current write token (identified by a fingerprint, never the token).
    await queryRunner.query(`
      CREATE TABLE map_write_state (
        id smallint PRIMARY KEY DEFAULT 1,
        token_fingerprint varchar(64) NOT NULL,
        write_api_allowed boolean NOT NULL DEFAULT false,
        permissions_checked_at timestamptz NULL,
        disabled_at timestamptz NULL,
        disabled_reason varchar(64) NOT NULL DEFAULT '',
        CONSTRAINT map_write_state_singleton CHECK (id = 1)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE map_write_state');
    await queryRunner.query('DROP TABLE map_contribution_events');
    await queryRunner.query('DROP FUNCTION map_contribution_events_append_only()');
    await queryRunner.query('DROP TABLE map_contributions');
  }
}
