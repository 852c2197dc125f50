import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts and authentication: refresh sessions, social identities, push device tokens, the replay guard of
 * social identity tokens, and the last login time. Social accounts whose provider did not verify an email keep
 * `email = ''`, so the email uniqueness index now covers non-empty emails only.
 */
export class Accounts1763800000000 implements MigrationInterface {
  name = 'Accounts1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE users ADD COLUMN last_login_at timestamptz NULL');
    await queryRunner.query('DROP INDEX users_email_lower_key');
    await queryRunner.query(
      "CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email)) WHERE email <> ''",
    );

    await queryRunner.query(`
      CREATE TABLE refresh_sessions (
        id uuid NOT NULL,
        user_id integer NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NULL,
        CONSTRAINT refresh_sessions_pkey PRIMARY KEY (id),
        CONSTRAINT refresh_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await queryRunner.query(
      'CREATE INDEX refresh_sessions_user_id_idx ON refresh_sessions (user_id)',
    );

    await queryRunner.query(`
      CREATE TABLE social_identities (
        id serial NOT NULL,
        provider varchar(16) NOT NULL,
        subject varchar(255) NOT NULL,
        user_id integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT social_identities_pkey PRIMARY KEY (id),
        CONSTRAINT social_identities_provider_subject_key UNIQUE (provider, subject),
        CONSTRAINT social_identities_provider_check CHECK (provider IN ('apple', 'google')),
        CONSTRAINT social_identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await queryRunner.query(
      'CREATE INDEX social_identities_user_id_idx ON social_identities (user_id)',
    );

    await queryRunner.query(`
      CREATE TABLE device_tokens (
        id serial NOT NULL,
        token varchar(512) NOT NULL,
        environment varchar(16) NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        user_id integer NOT NULL,
        session_id uuid NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT device_tokens_pkey PRIMARY KEY (id),
        CONSTRAINT device_tokens_token_key UNIQUE (token),
        CONSTRAINT device_tokens_environment_check CHECK (environment IN ('sandbox', 'production')),
        CONSTRAINT device_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT device_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES refresh_sessions (id)
          ON DELETE SET NULL
      )`);
    await queryRunner.query('CREATE INDEX device_tokens_user_id_idx ON device_tokens (user_id)');
    await queryRunner.query(
      'CREATE INDEX device_tokens_session_id_idx ON device_tokens (session_id)',
    );

    // Used social identity tokens (by jti, else by a hash of the token) until they expire: the replay guard
    // when no Redis is configured.
    await queryRunner.query(`
      CREATE TABLE used_identity_tokens (
        key varchar(128) NOT NULL,
        expires_at timestamptz NOT NULL,
        CONSTRAINT used_identity_tokens_pkey PRIMARY KEY (key)
      )`);
    await queryRunner.query(
      'CREATE INDEX used_identity_tokens_expires_at_idx ON used_identity_tokens (expires_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE used_identity_tokens');
    await queryRunner.query('DROP TABLE device_tokens');
    await queryRunner.query('DROP TABLE social_identities');
    await queryRunner.query('DROP TABLE refresh_sessions');
    await queryRunner.query(
      "UPDATE users SET email = 'user-' || id || '@users.invalid' WHERE email = ''",
    );
    await queryRunner.query('DROP INDEX users_email_lower_key');
    await queryRunner.query('CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email))');
    await queryRunner.query('ALTER TABLE users DROP COLUMN last_login_at');
  }
}
