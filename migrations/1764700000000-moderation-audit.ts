import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The moderation audit trail: one append-only row per staff decision (library status, staff edit, staged edit,
 * photo and report decisions, staff accounts created or promoted by the CLI). Actor and library are plain ids (no
 * foreign keys): deleting an account or a library must not rewrite history, and the actor's username is kept as it
 * was. Each filter of the audit list (kind, actor, library) has its own index, ordered like the list (newest first).
 */
export class ModerationAudit1764700000000 implements MigrationInterface {
  name = 'ModerationAudit1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE moderation_audit_events (
        id bigserial PRIMARY KEY,
        kind varchar(40) NOT NULL,
        actor_id integer NULL,
        actor_username varchar(150) NULL,
        library_id integer NULL,
        details jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX moderation_audit_events_kind_idx ON moderation_audit_events (kind, id)',
    );
    await queryRunner.query(
      'CREATE INDEX moderation_audit_events_actor_idx ON moderation_audit_events (lower(actor_username), id)',
    );
    await queryRunner.query(
      'CREATE INDEX moderation_audit_events_library_idx ON moderation_audit_events (library_id, id)',
    );
    // The console's audit page filters the map-contribution events by the same actor and library.
    await queryRunner.query(
      'CREATE INDEX map_contribution_events_library_idx ON map_contribution_events (library_id, id)',
    );
    await queryRunner.query(
      'CREATE INDEX map_contribution_events_actor_idx ON map_contribution_events (lower(actor_username), id)',
    );
    await queryRunner.query(`
      CREATE FUNCTION moderation_audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'moderation_audit_events is append-only';
      END $fn$`);
    await queryRunner.query(`
      CREATE TRIGGER moderation_audit_events_append_only
      BEFORE UPDATE OR DELETE ON moderation_audit_events
      FOR EACH ROW EXECUTE FUNCTION moderation_audit_events_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER moderation_audit_events_no_truncate
      BEFORE TRUNCATE ON moderation_audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION moderation_audit_events_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX map_contribution_events_actor_idx');
    await queryRunner.query('DROP INDEX map_contribution_events_library_idx');
    await queryRunner.query('DROP TABLE moderation_audit_events');
    await queryRunner.query('DROP FUNCTION moderation_audit_events_append_only()');
  }
}
