import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Staff console sessions. Each belongs to a refresh session (so revoking sessions through the API, a password
 * change or deleting the account also ends it); the cookie holds a random token of which only the SHA-256 is kept.
 */
export class AdminConsole1764100000000 implements MigrationInterface {
  name = 'AdminConsole1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE console_sessions (
        token_hash bytea PRIMARY KEY,
        session_id uuid NOT NULL REFERENCES refresh_sessions(id) ON DELETE CASCADE,
        csrf_token varchar(64) NOT NULL,
        created_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        CONSTRAINT console_sessions_session_key UNIQUE (session_id)
      )
    `);
    await queryRunner.query(
      `CREATE INDEX console_sessions_last_seen_at_idx ON console_sessions (last_seen_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE console_sessions`);
  }
}
