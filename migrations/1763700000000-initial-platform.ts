import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialPlatform1763700000000 implements MigrationInterface {
  name = 'InitialPlatform1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE EXTENSION IF NOT EXISTS postgis');
    await queryRunner.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await queryRunner.query('CREATE EXTENSION IF NOT EXISTS unaccent');
    await queryRunner.query(`
      CREATE TABLE users (
        id serial PRIMARY KEY,
        username varchar(150) NOT NULL,
        email varchar(254) NOT NULL,
        password_hash text NULL,
        is_staff boolean NOT NULL DEFAULT false,
        is_active boolean NOT NULL DEFAULT true,
        first_name varchar(150) NOT NULL DEFAULT '',
        last_name varchar(150) NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX users_username_lower_key ON users (lower(username))',
    );
    await queryRunner.query('CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email))');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE users');
  }
}
