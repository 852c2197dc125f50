import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Libraries and what hangs off them: favourites, community photos, reports, AI enrichment jobs.
 * Permission and provenance (spec rules 1–5): every row starts with mapdb_submission_allowed = false,
 * mapdb_submission_allowed_at = null and submission_origin = 'legacy'; the permission column has no index.
 */
export class Libraries1763900000000 implements MigrationInterface {
  name = 'Libraries1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // unaccent() is only STABLE; an IMMUTABLE wrapper with a fixed dictionary can back generated columns/indexes.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION bookcase_unaccent(text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $fn$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $fn$`);

    await queryRunner.query(`
      CREATE TABLE libraries (
        id serial PRIMARY KEY,
        slug varchar(255) NOT NULL,
        name varchar(255) NOT NULL DEFAULT '',
        description text NOT NULL DEFAULT '',
        address varchar(255) NOT NULL DEFAULT '',
        city varchar(100) NOT NULL,
        country char(2) NOT NULL,
        postal_code varchar(20) NOT NULL DEFAULT '',
        wheelchair_accessible varchar(7) NOT NULL DEFAULT '',
        capacity integer NULL,
        is_indoor boolean NULL,
        is_lit boolean NULL,
        website varchar(500) NOT NULL DEFAULT '',
        contact varchar(255) NOT NULL DEFAULT '',
        operator varchar(255) NOT NULL DEFAULT '',
        brand varchar(255) NOT NULL DEFAULT '',
        source varchar(100) NOT NULL DEFAULT '',
        external_id varchar(255) NOT NULL DEFAULT '',
        photo_key varchar(255) NULL,
        thumbnail_key varchar(255) NULL,
        location geography(Point, 4326) NOT NULL,
        status varchar(8) NOT NULL DEFAULT 'pending',
        rejection_reason text NOT NULL DEFAULT '',
        mapdb_submission_allowed boolean NOT NULL DEFAULT false,
        mapdb_submission_allowed_at timestamptz NULL,
        submission_origin varchar(6) NOT NULL DEFAULT 'legacy',
        created_by integer NULL REFERENCES users(id) ON DELETE SET NULL,
        pending_changes jsonb NULL,
        pending_photo jsonb NULL,
        ai_generated_fields text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('simple', bookcase_unaccent(name)), 'A') ||
          setweight(to_tsvector('simple', bookcase_unaccent(description)), 'B')
        ) STORED,
        search_text text GENERATED ALWAYS AS (
          lower(bookcase_unaccent(name || ' ' || description || ' ' || city || ' ' || address || ' ' || postal_code))
        ) STORED,
        CONSTRAINT libraries_slug_key UNIQUE (slug),
        CONSTRAINT libraries_status_check CHECK (status IN ('pending', 'approved', 'rejected')),
        CONSTRAINT libraries_origin_check CHECK (submission_origin IN ('legacy', 'user', 'staff', 'import')),
        CONSTRAINT libraries_wheelchair_check CHECK (wheelchair_accessible IN ('', 'yes', 'no', 'limited')),
        CONSTRAINT libraries_capacity_check CHECK (capacity IS NULL OR capacity >= 0),
        CONSTRAINT libraries_country_check CHECK (country ~ '^[A-Z]{2}$'),
        CONSTRAINT libraries_permission_time_check
          CHECK (mapdb_submission_allowed OR mapdb_submission_allowed_at IS NULL)
      )`);
    await queryRunner.query(
      'CREATE INDEX libraries_slug_pattern_idx ON libraries (slug varchar_pattern_ops)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_location_idx ON libraries USING gist (location)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_search_vector_idx ON libraries USING gin (search_vector)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_search_text_trgm_idx ON libraries USING gin (search_text gin_trgm_ops)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_city_trgm_idx ON libraries USING gin (lower(city) gin_trgm_ops)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_postal_code_trgm_idx ON libraries USING gin (postal_code gin_trgm_ops)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_status_created_idx ON libraries (status, created_at DESC, id DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_status_country_idx ON libraries (status, country)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_submission_origin_idx ON libraries (submission_origin)',
    );
    await queryRunner.query(
      'CREATE INDEX libraries_created_by_idx ON libraries (created_by, created_at DESC)',
    );
    await queryRunner.query(
      "CREATE INDEX libraries_external_id_idx ON libraries (external_id) WHERE external_id <> ''",
    );

    await queryRunner.query(`
      CREATE TABLE favourites (
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        library_id integer NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, library_id)
      )`);
    await queryRunner.query(
      'CREATE INDEX favourites_user_created_idx ON favourites (user_id, created_at DESC)',
    );
    await queryRunner.query('CREATE INDEX favourites_library_idx ON favourites (library_id)');

    await queryRunner.query(`
      CREATE TABLE library_photos (
        id serial PRIMARY KEY,
        library_id integer NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        created_by integer NULL REFERENCES users(id) ON DELETE SET NULL,
        caption varchar(200) NOT NULL DEFAULT '',
        photo_key varchar(255) NOT NULL,
        thumbnail_key varchar(255) NOT NULL,
        status varchar(8) NOT NULL DEFAULT 'pending',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT library_photos_status_check CHECK (status IN ('pending', 'approved', 'rejected'))
      )`);
    await queryRunner.query(
      'CREATE INDEX library_photos_library_status_idx ON library_photos (library_id, status, created_at DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX library_photos_status_created_idx ON library_photos (status, created_at DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX library_photos_created_by_idx ON library_photos (created_by, created_at DESC)',
    );

    await queryRunner.query(`
      CREATE TABLE reports (
        id serial PRIMARY KEY,
        library_id integer NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        created_by integer NULL REFERENCES users(id) ON DELETE SET NULL,
        reason varchar(20) NOT NULL,
        details text NOT NULL DEFAULT '',
        photo_key varchar(255) NULL,
        thumbnail_key varchar(255) NULL,
        status varchar(9) NOT NULL DEFAULT 'open',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT reports_reason_check
          CHECK (reason IN ('damaged', 'missing', 'incorrect_info', 'inappropriate', 'other')),
        CONSTRAINT reports_status_check CHECK (status IN ('open', 'resolved', 'dismissed'))
      )`);
    await queryRunner.query(
      'CREATE INDEX reports_status_created_idx ON reports (status, created_at DESC)',
    );
    await queryRunner.query('CREATE INDEX reports_library_idx ON reports (library_id)');
    await queryRunner.query(
      'CREATE INDEX reports_created_by_idx ON reports (created_by, created_at DESC)',
    );

    await queryRunner.query(`
      CREATE TABLE enrichment_jobs (
        id serial PRIMARY KEY,
        library_id integer NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        status varchar(9) NOT NULL DEFAULT 'queued',
        attempts integer NOT NULL DEFAULT 0,
        run_after timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz NULL,
        last_error text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT enrichment_jobs_status_check CHECK (status IN ('queued', 'running', 'done', 'failed'))
      )`);
    await queryRunner.query(
      "CREATE INDEX enrichment_jobs_due_idx ON enrichment_jobs (run_after) WHERE status IN ('queued', 'running')",
    );
    await queryRunner.query(
      'CREATE INDEX enrichment_jobs_library_idx ON enrichment_jobs (library_id)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE enrichment_jobs');
    await queryRunner.query('DROP TABLE reports');
    await queryRunner.query('DROP TABLE library_photos');
    await queryRunner.query('DROP TABLE favourites');
    await queryRunner.query('DROP TABLE libraries');
    await queryRunner.query('DROP FUNCTION bookcase_unaccent(text)');
  }
}
