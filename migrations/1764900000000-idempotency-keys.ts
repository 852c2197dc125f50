import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys of photo-carrying creates (issue 14): a retry after an unknown outcome (a lost COMMIT, a 503, a
 * dropped connection) with the same `Idempotency-Key` answers the original result instead of creating again. The
 * row is written in the transaction of the created resource. Looked up by its primary key (user, key); the expiry
 * sweep reads `created_at` through its own index.
 */
export class IdempotencyKeys1764900000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        user_id integer NOT NULL,
        key varchar(128) NOT NULL,
        scope varchar(64) NOT NULL,
        fingerprint char(64) NOT NULL,
        resource_id integer NOT NULL,
        response_status smallint NOT NULL,
        response_body jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key),
        CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )
    `);
    await queryRunner.query(
      'CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE idempotency_keys');
  }
}
