import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbound messages (issue 20): the users' notice preferences, single-use password reset tokens (only their
 * SHA-256 is stored) and the durable queue of emails and pushes (`notification_jobs`), written in the transaction of
 * the event that causes them and worked by claimed leases (SKIP LOCKED), like `enrichment_jobs`.
 */
export class Notifications1765300000000 implements MigrationInterface {
  name = 'Notifications1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE users
        ADD COLUMN notify_email boolean NOT NULL DEFAULT true,
        ADD COLUMN notify_push boolean NOT NULL DEFAULT true`);
    // New moderation work fans out to the active staff.
    await queryRunner.query(
      'CREATE INDEX users_active_staff_idx ON users (id) WHERE is_staff AND is_active',
    );
    // Every device of a user (push fan-out) is read through device_tokens_user_id_idx.

    await queryRunner.query(`
      CREATE TABLE notification_jobs (
        id bigserial PRIMARY KEY,
        channel varchar(8) NOT NULL,
        kind varchar(40) NOT NULL,
        user_id integer NULL REFERENCES users (id) ON DELETE CASCADE,
        recipient varchar(254) NULL,
        device_token_id integer NULL REFERENCES device_tokens (id) ON DELETE CASCADE,
        payload jsonb NOT NULL DEFAULT '{}',
        collapse_key varchar(80) NULL,
        status varchar(10) NOT NULL DEFAULT 'queued',
        attempts integer NOT NULL DEFAULT 0,
        run_after timestamptz NOT NULL,
        locked_until timestamptz NULL,
        claimed_at timestamptz NULL,
        last_error varchar(200) NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        finished_at timestamptz NULL,
        CONSTRAINT notification_jobs_channel_check CHECK (channel IN ('email', 'push')),
        CONSTRAINT notification_jobs_status_check
          CHECK (status IN ('queued', 'running', 'sent', 'skipped', 'failed')),
        CONSTRAINT notification_jobs_target_check CHECK (
          (channel = 'email' AND recipient IS NOT NULL) OR (channel = 'push' AND device_token_id IS NOT NULL))
      )`);
    // The worker's claim: the oldest due queued job.
    await queryRunner.query(
      "CREATE INDEX notification_jobs_due_idx ON notification_jobs (run_after, id) WHERE status = 'queued'",
    );
    // Leases of crashed workers.
    await queryRunner.query(
      "CREATE INDEX notification_jobs_lease_idx ON notification_jobs (locked_until) WHERE status = 'running'",
    );
    // Collapsing: at most one queued job per key (a staff device's pending "work is waiting" push).
    await queryRunner.query(
      `CREATE UNIQUE INDEX notification_jobs_collapse_key ON notification_jobs (collapse_key)
        WHERE status = 'queued' AND collapse_key IS NOT NULL`,
    );
    // The staff window: when a user's last push of a kind went out.
    await queryRunner.query(
      'CREATE INDEX notification_jobs_user_kind_idx ON notification_jobs (user_id, kind, claimed_at)',
    );
    await queryRunner.query(
      'CREATE INDEX notification_jobs_device_idx ON notification_jobs (device_token_id)',
    );
    // Retention: finished jobs are purged after a while.
    await queryRunner.query(
      'CREATE INDEX notification_jobs_finished_idx ON notification_jobs (finished_at) WHERE finished_at IS NOT NULL',
    );

    await queryRunner.query(`
      CREATE TABLE password_reset_tokens (
        id bigserial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        token_hash bytea NOT NULL,
        job_id bigint NULL REFERENCES notification_jobs (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz NULL,
        CONSTRAINT password_reset_tokens_token_hash_key UNIQUE (token_hash)
      )`);
    await queryRunner.query(
      'CREATE INDEX password_reset_tokens_user_idx ON password_reset_tokens (user_id)',
    );
    await queryRunner.query(
      'CREATE INDEX password_reset_tokens_job_idx ON password_reset_tokens (job_id)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE password_reset_tokens');
    await queryRunner.query('DROP TABLE notification_jobs');
    await queryRunner.query('DROP INDEX users_active_staff_idx');
    await queryRunner.query('ALTER TABLE users DROP COLUMN notify_push, DROP COLUMN notify_email');
  }
}
