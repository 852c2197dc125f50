--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: EXTENSION pg_trgm; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';

--
-- Name: postgis; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS postgis WITH SCHEMA public;

--
-- Name: EXTENSION postgis; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION postgis IS 'PostGIS geometry and geography spatial types and functions';

--
-- Name: unaccent; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;

--
-- Name: EXTENSION unaccent; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION unaccent IS 'text search dictionary that removes accents';

--
-- Name: bookcase_country_bitmaps_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_country_bitmaps_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
      DECLARE
        flips text;
        empty_countries text[];
        empty_chunks integer[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          flips := $q$SELECT n.country, n.id FROM new_rows n WHERE n.status = 'approved'$q$;
        ELSIF TG_OP = 'DELETE' THEN
          flips := $q$SELECT o.country, o.id FROM old_rows o WHERE o.status = 'approved'$q$;
        ELSE
          -- An approved library on one side only (a new status or a new country); unchanged rows cost a join.
          flips := $q$SELECT d.country, d.id FROM (
              SELECT o.country, o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
              WHERE o.status = 'approved' AND (n.status <> 'approved' OR n.country IS DISTINCT FROM o.country)
              UNION ALL
              SELECT n.country, n.id FROM old_rows o JOIN new_rows n ON n.id = o.id
              WHERE n.status = 'approved' AND (o.status <> 'approved' OR n.country IS DISTINCT FROM o.country)
            ) d$q$;
        END IF;
        EXECUTE format($s$
          WITH toggled AS (
            INSERT INTO library_country_bitmaps AS s (country, chunk, approved)
            SELECT f.country, f.id >> 13, bookcase_search_bits(array_agg(f.id & 8191))
            FROM (%s) f
            GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (country, chunk) DO UPDATE SET approved = s.approved # excluded.approved
            RETURNING s.country, s.chunk, s.approved)
          SELECT array_agg(t.country), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
        $s$, flips) INTO empty_countries, empty_chunks;
        IF empty_countries IS NOT NULL THEN
          DELETE FROM library_country_bitmaps s
          USING unnest(empty_countries, empty_chunks) AS e(country, chunk)
          WHERE s.country = e.country AND s.chunk = e.chunk AND bit_count(s.approved) = 0;
        END IF;
        RETURN NULL;
      END
      $_$;

--
-- Name: bookcase_favourite_library_approved(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_favourite_library_approved() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        -- FOR SHARE waits for a concurrent status change of the library and reads its outcome; a status change
        -- that starts after this waits for the favourite's commit and then updates it.
        NEW.library_approved := coalesce(
          (SELECT l.status = 'approved' FROM libraries l WHERE l.id = NEW.library_id FOR SHARE), false);
        RETURN NEW;
      END $$;

--
-- Name: bookcase_library_counts_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_library_counts_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        CREATE TEMP TABLE IF NOT EXISTS bookcase_counts_delta
          (country char(2), day date, approved integer, with_photo integer) ON COMMIT DROP;
        DELETE FROM bookcase_counts_delta;
        IF TG_OP = 'INSERT' THEN
          INSERT INTO bookcase_counts_delta
          SELECT n.country, (n.created_at AT TIME ZONE 'UTC')::date, count(*),
                 count(*) FILTER (WHERE n.photo_key IS NOT NULL)
          FROM new_rows n WHERE n.status = 'approved' GROUP BY 1, 2;
        ELSIF TG_OP = 'DELETE' THEN
          INSERT INTO bookcase_counts_delta
          SELECT o.country, (o.created_at AT TIME ZONE 'UTC')::date, -count(*),
                 -count(*) FILTER (WHERE o.photo_key IS NOT NULL)
          FROM old_rows o WHERE o.status = 'approved' GROUP BY 1, 2;
        ELSE
          INSERT INTO bookcase_counts_delta
          SELECT d.country, d.day, sum(d.delta), sum(d.photo)
          FROM (SELECT o.country, (o.created_at AT TIME ZONE 'UTC')::date AS day, -1 AS delta,
                       CASE WHEN o.photo_key IS NULL THEN 0 ELSE -1 END AS photo
                FROM old_rows o WHERE o.status = 'approved'
                UNION ALL
                SELECT n.country, (n.created_at AT TIME ZONE 'UTC')::date, 1,
                       CASE WHEN n.photo_key IS NULL THEN 0 ELSE 1 END
                FROM new_rows n WHERE n.status = 'approved') d
          GROUP BY 1, 2 HAVING sum(d.delta) <> 0 OR sum(d.photo) <> 0;
        END IF;
        INSERT INTO library_counts AS c (country, day, approved, with_photo)
        SELECT country, day, approved, with_photo FROM bookcase_counts_delta ORDER BY 1, 2
        ON CONFLICT (country, day) DO UPDATE
          SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        INSERT INTO library_country_counts AS c (country, approved, with_photo)
        SELECT country, sum(approved), sum(with_photo) FROM bookcase_counts_delta
        GROUP BY 1 HAVING sum(approved) <> 0 OR sum(with_photo) <> 0 ORDER BY 1
        ON CONFLICT (country) DO UPDATE
          SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_library_place_counts_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_library_place_counts_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          
  INSERT INTO library_city_counts AS c (city, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT r.city AS key, r.country, 1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (city, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;

  INSERT INTO library_postal_code_counts AS c (postal_code, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT r.postal_code AS key, r.country, 1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (postal_code, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;

  INSERT INTO library_place_grams AS c (gram, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT 'city' || ':' || g.gram AS key, r.country, 1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(lower(r.city), i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(lower(r.city)) - n + 1) AS i) g
   WHERE r.status = 'approved' UNION ALL SELECT 'postal_code' || ':' || g.gram AS key, r.country, 1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(r.postal_code, i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(r.postal_code) - n + 1) AS i) g
   WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (gram, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        ELSIF TG_OP = 'DELETE' THEN
          
  INSERT INTO library_city_counts AS c (city, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT r.city AS key, r.country, -1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (city, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;

  INSERT INTO library_postal_code_counts AS c (postal_code, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT r.postal_code AS key, r.country, -1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (postal_code, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;

  INSERT INTO library_place_grams AS c (gram, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT 'city' || ':' || g.gram AS key, r.country, -1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(lower(r.city), i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(lower(r.city)) - n + 1) AS i) g
   WHERE r.status = 'approved' UNION ALL SELECT 'postal_code' || ':' || g.gram AS key, r.country, -1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(r.postal_code, i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(r.postal_code) - n + 1) AS i) g
   WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (gram, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        ELSE
          
  INSERT INTO library_city_counts AS c (city, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT r.city AS key, r.country, -1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r WHERE r.status = 'approved' UNION ALL SELECT r.city AS key, r.country, 1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (city, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;

  INSERT INTO library_postal_code_counts AS c (postal_code, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT r.postal_code AS key, r.country, -1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r WHERE r.status = 'approved' UNION ALL SELECT r.postal_code AS key, r.country, 1 AS approved, CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (postal_code, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;

  INSERT INTO library_place_grams AS c (gram, country, approved, with_photo)
  SELECT d.key, d.country, sum(d.approved), sum(d.with_photo) FROM (SELECT 'city' || ':' || g.gram AS key, r.country, -1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(lower(r.city), i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(lower(r.city)) - n + 1) AS i) g
   WHERE r.status = 'approved' UNION ALL SELECT 'city' || ':' || g.gram AS key, r.country, 1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(lower(r.city), i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(lower(r.city)) - n + 1) AS i) g
   WHERE r.status = 'approved' UNION ALL SELECT 'postal_code' || ':' || g.gram AS key, r.country, -1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(r.postal_code, i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(r.postal_code) - n + 1) AS i) g
   WHERE r.status = 'approved' UNION ALL SELECT 'postal_code' || ':' || g.gram AS key, r.country, 1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r CROSS JOIN LATERAL (
     SELECT DISTINCT substr(r.postal_code, i, n) AS gram
     FROM generate_series(1, 2) AS n, generate_series(1, char_length(r.postal_code) - n + 1) AS i) g
   WHERE r.status = 'approved') d
  GROUP BY 1, 2 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2
  ON CONFLICT (gram, country) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        END IF;
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_library_place_pairs_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_library_place_pairs_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          
  INSERT INTO library_place_pairs AS c (city, country, postal_code, approved, with_photo)
  SELECT d.city, d.country, d.postal_code, sum(d.approved), sum(d.with_photo) FROM (SELECT r.city, r.postal_code, r.country, 1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2, 3 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (city, country, postal_code) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        ELSIF TG_OP = 'DELETE' THEN
          
  INSERT INTO library_place_pairs AS c (city, country, postal_code, approved, with_photo)
  SELECT d.city, d.country, d.postal_code, sum(d.approved), sum(d.with_photo) FROM (SELECT r.city, r.postal_code, r.country, -1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2, 3 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (city, country, postal_code) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        ELSE
          
  INSERT INTO library_place_pairs AS c (city, country, postal_code, approved, with_photo)
  SELECT d.city, d.country, d.postal_code, sum(d.approved), sum(d.with_photo) FROM (SELECT r.city, r.postal_code, r.country, -1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE -1 END AS with_photo
   FROM old_rows r WHERE r.status = 'approved' UNION ALL SELECT r.city, r.postal_code, r.country, 1 AS approved,
          CASE WHEN r.photo_key IS NULL THEN 0 ELSE 1 END AS with_photo
   FROM new_rows r WHERE r.status = 'approved') d
  GROUP BY 1, 2, 3 HAVING sum(d.approved) <> 0 OR sum(d.with_photo) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (city, country, postal_code) DO UPDATE
    SET approved = c.approved + excluded.approved, with_photo = c.with_photo + excluded.with_photo;
        END IF;
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_library_status_favourites(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_library_status_favourites() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        UPDATE favourites SET library_approved = (NEW.status = 'approved')
        WHERE library_id = NEW.id AND library_approved IS DISTINCT FROM (NEW.status = 'approved');
        RETURN NULL;
      END $$;

--
-- Name: bookcase_map_cell(double precision, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_cell(v double precision, level integer) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT least(greatest(floor(v * power(2.0::double precision, level + 2)), 0),
                         power(2.0::double precision, level + 2) - 1)::integer $$;

--
-- Name: bookcase_map_cells_add(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_cells_add(points jsonb) RETURNS void
    LANGUAGE sql
    AS $$
        INSERT INTO library_map_cells AS c
          (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
        SELECT g.level, bookcase_map_cell(bookcase_map_x(p.lng), g.level),
               bookcase_map_cell(bookcase_map_y(p.lat), g.level), p.country, p.photo,
               count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat), max(p.lng), max(p.lat), min(p.id)
        FROM jsonb_to_recordset(points)
               AS p(id integer, lng double precision, lat double precision, country character(2), photo boolean)
        CROSS JOIN generate_series(0, 16) AS g(level)
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (level, cx, cy, country, has_photo) DO UPDATE SET
          count = c.count + excluded.count,
          sum_lng = c.sum_lng + excluded.sum_lng,
          sum_lat = c.sum_lat + excluded.sum_lat,
          min_lng = least(c.min_lng, excluded.min_lng),
          min_lat = least(c.min_lat, excluded.min_lat),
          max_lng = greatest(c.max_lng, excluded.max_lng),
          max_lat = greatest(c.max_lat, excluded.max_lat),
          min_id = least(c.min_id, excluded.min_id)
      $$;

--
-- Name: bookcase_map_cells_photos_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_cells_photos_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      DECLARE
        touched integer[];
        cells jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(DISTINCT n.library_id) INTO touched FROM new_rows n WHERE n.status = 'approved';
        ELSIF TG_OP = 'DELETE' THEN
          SELECT array_agg(DISTINCT o.library_id) INTO touched FROM old_rows o WHERE o.status = 'approved';
        ELSE
          SELECT array_agg(DISTINCT c.library_id) INTO touched
            FROM (SELECT a.library_id FROM new_rows a WHERE a.status = 'approved' AND NOT EXISTS (
         SELECT 1 FROM old_rows b WHERE b.id = a.id AND b.library_id = a.library_id AND b.status = 'approved') UNION SELECT a.library_id FROM old_rows a WHERE a.status = 'approved' AND NOT EXISTS (
         SELECT 1 FROM new_rows b WHERE b.id = a.id AND b.library_id = a.library_id AND b.status = 'approved')) c;
        END IF;
        IF touched IS NULL THEN
          RETURN NULL;
        END IF;
        SELECT jsonb_agg(jsonb_build_object(
                 'cx', bookcase_map_cell(bookcase_map_x(ST_X(l.location::geometry)), 16),
                 'cy', bookcase_map_cell(bookcase_map_y(ST_Y(l.location::geometry)), 16)))
          INTO cells FROM libraries l WHERE l.id = ANY(touched) AND l.status = 'approved';
        IF cells IS NULL THEN
          RETURN NULL;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bookcase_map_cells'));
        PERFORM bookcase_map_cells_recount(cells);
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_map_cells_recount(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_cells_recount(cells jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
      DECLARE
        lvl integer;
      BEGIN
        CREATE TEMP TABLE IF NOT EXISTS bookcase_map_dirty (level smallint, cx integer, cy integer)
          ON COMMIT DROP;
        DELETE FROM bookcase_map_dirty;
        -- A cell at a coarser level is its finest cell's ancestor: the finest index shifted right.
        INSERT INTO bookcase_map_dirty
          SELECT DISTINCT g.level, d.cx >> (16 - g.level), d.cy >> (16 - g.level)
          FROM jsonb_to_recordset(cells) AS d(cx integer, cy integer)
          CROSS JOIN generate_series(0, 16) AS g(level);
        ANALYZE bookcase_map_dirty;
        DELETE FROM library_map_cells c USING bookcase_map_dirty d
          WHERE d.level = 16 AND c.level = 16 AND c.cx = d.cx AND c.cy = d.cy;
        INSERT INTO library_map_cells
          (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
        SELECT 16, d.cx, d.cy, p.country, p.photo, count(*), sum(p.lng), sum(p.lat), min(p.lng), min(p.lat),
               max(p.lng), max(p.lat), min(p.id)
        FROM bookcase_map_dirty d
        CROSS JOIN LATERAL (
          SELECT CASE WHEN d.cx = 0 THEN -180 ELSE d.cx / 262144.0 * 360 - 180 - 1e-9 END AS west,
                 CASE WHEN d.cx = 262143 THEN 180 ELSE (d.cx + 1) / 262144.0 * 360 - 180 + 1e-9 END AS east,
                 CASE WHEN d.cy = 0 THEN 90
                      ELSE degrees(atan(sinh(pi() * (1 - 2 * d.cy / 262144.0)))) + 1e-9 END AS north,
                 CASE WHEN d.cy = 262143 THEN -90
                      ELSE degrees(atan(sinh(pi() * (1 - 2 * (d.cy + 1) / 262144.0)))) - 1e-9 END AS south
        ) b
        CROSS JOIN LATERAL (
          SELECT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat, l.country,
                 (l.photo_key IS NOT NULL OR EXISTS (
     SELECT 1 FROM library_photos ph WHERE ph.library_id = l.id AND ph.status = 'approved')) AS photo
          FROM libraries l
          WHERE l.status = 'approved'
            AND point(ST_X(l.location::geometry), ST_Y(l.location::geometry))
                <@ box(point(b.west, b.south), point(b.east, b.north))
          OFFSET 0
        ) p
        WHERE d.level = 16
          AND bookcase_map_cell(bookcase_map_x(p.lng), 16) = d.cx
           AND bookcase_map_cell(bookcase_map_y(p.lat), 16) = d.cy
        GROUP BY d.cx, d.cy, p.country, p.photo;
        FOR lvl IN REVERSE 15..0 LOOP
          
          DELETE FROM library_map_cells c USING bookcase_map_dirty d
            WHERE d.level = lvl AND c.level = lvl AND c.cx = d.cx AND c.cy = d.cy;
          INSERT INTO library_map_cells
            (level, cx, cy, country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id)
          SELECT lvl, d.cx, d.cy, k.country, k.has_photo, sum(k.count), sum(k.sum_lng), sum(k.sum_lat),
                 min(k.min_lng), min(k.min_lat), max(k.max_lng), max(k.max_lat), min(k.min_id)
          FROM bookcase_map_dirty d
          JOIN library_map_cells k ON k.level = lvl + 1 AND k.cx BETWEEN d.cx * 2 AND d.cx * 2 + 1
                                  AND k.cy BETWEEN d.cy * 2 AND d.cy * 2 + 1
          WHERE d.level = lvl
          GROUP BY d.cx, d.cy, k.country, k.has_photo;
        END LOOP;
      END
      $$;

--
-- Name: bookcase_map_cells_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_cells_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      DECLARE
        added jsonb;
        removed jsonb;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT jsonb_agg(jsonb_build_object('id', n.id, 'lng', ST_X(n.location::geometry),
         'lat', ST_Y(n.location::geometry), 'country', n.country, 'photo', (n.photo_key IS NOT NULL OR EXISTS (
     SELECT 1 FROM library_photos ph WHERE ph.library_id = n.id AND ph.status = 'approved')))) INTO added FROM new_rows n WHERE n.status = 'approved';
        ELSIF TG_OP = 'DELETE' THEN
          SELECT jsonb_agg(jsonb_build_object('lng', ST_X(o.location::geometry),
         'lat', ST_Y(o.location::geometry))) INTO removed FROM old_rows o WHERE o.status = 'approved';
        ELSE
          SELECT jsonb_agg(jsonb_build_object('id', n.id, 'lng', ST_X(n.location::geometry),
         'lat', ST_Y(n.location::geometry), 'country', n.country, 'photo', (n.photo_key IS NOT NULL OR EXISTS (
     SELECT 1 FROM library_photos ph WHERE ph.library_id = n.id AND ph.status = 'approved')))) INTO added FROM new_rows n
            WHERE n.status = 'approved' AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = n.id AND o.status = 'approved' AND n.status = 'approved'
      AND ST_X(o.location::geometry) = ST_X(n.location::geometry)
      AND ST_Y(o.location::geometry) = ST_Y(n.location::geometry)
      AND o.country = n.country AND (o.photo_key IS NULL) = (n.photo_key IS NULL));
          SELECT jsonb_agg(jsonb_build_object('lng', ST_X(o.location::geometry),
         'lat', ST_Y(o.location::geometry))) INTO removed FROM old_rows o
            WHERE o.status = 'approved' AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE o.id = n.id AND o.status = 'approved' AND n.status = 'approved'
      AND ST_X(o.location::geometry) = ST_X(n.location::geometry)
      AND ST_Y(o.location::geometry) = ST_Y(n.location::geometry)
      AND o.country = n.country AND (o.photo_key IS NULL) = (n.photo_key IS NULL));
        END IF;
        IF added IS NULL AND removed IS NULL THEN
          RETURN NULL;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('bookcase_map_cells'));
        IF removed IS NULL THEN
          PERFORM bookcase_map_cells_add(added);
        ELSE
          -- The recount reads the libraries as they are now, so it also covers rows added by this statement.
          PERFORM bookcase_map_cells_recount((
            SELECT jsonb_agg(jsonb_build_object(
                     'cx', bookcase_map_cell(bookcase_map_x((p ->> 'lng')::double precision), 16),
                     'cy', bookcase_map_cell(bookcase_map_y((p ->> 'lat')::double precision), 16)))
            FROM jsonb_array_elements(removed || coalesce(added, '[]'::jsonb)) AS p));
        END IF;
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_map_x(double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_x(lng double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT (lng + 180.0) / 360.0 $$;

--
-- Name: bookcase_map_y(double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_map_y(lat double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT 0.5 - ln(tan(pi() / 4 + radians(least(85.0511287798066, greatest(-85.0511287798066, lat))) / 2))
                         / (2 * pi()) $$;

--
-- Name: bookcase_search_bitmaps_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_bitmaps_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
      DECLARE
        flips text;
        empty_prefixes text[];
        empty_chunks integer[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          -- An inserted approved library sets each of its prefixes (and each of its name's); a deleted one clears them.
          flips := $q$SELECT p.prefix, n.id, true AS approved, p.in_name
            FROM new_rows n, bookcase_search_prefixes(n.search_vector) p WHERE n.status = 'approved'$q$;
        ELSIF TG_OP = 'DELETE' THEN
          flips := $q$SELECT p.prefix, o.id, true AS approved, p.in_name
            FROM old_rows o, bookcase_search_prefixes(o.search_vector) p WHERE o.status = 'approved'$q$;
        ELSE
          -- What differs between the old approved vector and the new approved one: a prefix on one side only, or in
          -- the name on one side only. Rows whose status and vector stay as they were cost a join and nothing else.
          flips := $q$SELECT d.prefix, d.id, count(*) = 1 AS approved,
              count(*) FILTER (WHERE d.in_name) = 1 AS in_name
            FROM (
              SELECT p.prefix, o.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id, bookcase_search_prefixes(o.search_vector) p
              WHERE o.status = 'approved'
                AND (n.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
              UNION ALL
              SELECT p.prefix, n.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id, bookcase_search_prefixes(n.search_vector) p
              WHERE n.status = 'approved'
                AND (o.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
            ) d GROUP BY d.prefix, d.id$q$;
        END IF;
        EXECUTE format($s$
          WITH toggled AS (
            INSERT INTO library_search_bitmaps AS s (prefix, chunk, approved, in_name)
            SELECT f.prefix, f.id >> 13,
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.approved), '{}')),
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.in_name), '{}'))
            FROM (%s) f WHERE f.approved OR f.in_name
            GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (prefix, chunk) DO UPDATE
              SET approved = s.approved # excluded.approved, in_name = s.in_name # excluded.in_name
            RETURNING s.prefix, s.chunk, s.approved)
          SELECT array_agg(t.prefix), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
        $s$, flips) INTO empty_prefixes, empty_chunks;
        IF empty_prefixes IS NOT NULL THEN
          DELETE FROM library_search_bitmaps s
          USING unnest(empty_prefixes, empty_chunks) AS e(prefix, chunk)
          WHERE s.prefix = e.prefix AND s.chunk = e.chunk AND bit_count(s.approved) = 0;
        END IF;
        RETURN NULL;
      END
      $_$;

--
-- Name: bookcase_search_bits(integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_bits(offsets integer[]) RETURNS bit
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
      DECLARE
        bits bit(8192) := B'0'::bit(8192);
        o integer;
      BEGIN
        IF cardinality(offsets) >= 100 THEN
          SELECT rpad(string_agg(repeat('0', 64 * (w.w - coalesce(w.before, -1) - 1)) || w.word::bit(64)::text, ''
                                 ORDER BY w.w), 8192, '0')::bit(8192)
          INTO bits
          FROM (SELECT g.w, g.word, lag(g.w) OVER (ORDER BY g.w) AS before
                FROM (SELECT x >> 6 AS w, bit_or(1::bigint << (63 - (x & 63))) AS word
                      FROM unnest(offsets) x GROUP BY 1) g) w;
          RETURN bits;
        END IF;
        FOREACH o IN ARRAY offsets LOOP
          bits := set_bit(bits, o, 1);
        END LOOP;
        RETURN bits;
      END
      $$;

--
-- Name: bookcase_search_bits_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_bits_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
        DECLARE
          keys text := quote_ident(TG_ARGV[1]);
          flips text;
          empty_tokens text[];
          empty_chunks integer[];
        BEGIN
          IF TG_OP = 'INSERT' THEN
            flips := format($q$SELECT p.token, n.id, true AS approved, p.in_name
              FROM new_rows n, %s(n.search_text, lower(bookcase_unaccent(n.name))) p
              WHERE n.status = 'approved'$q$, keys);
          ELSIF TG_OP = 'DELETE' THEN
            flips := format($q$SELECT p.token, o.id, true AS approved, p.in_name
              FROM old_rows o, %s(o.search_text, lower(bookcase_unaccent(o.name))) p
              WHERE o.status = 'approved'$q$, keys);
          ELSE
            -- What differs between the old approved keys and the new approved ones: a key on one side only, or in
            -- the name on one side only. Rows whose status, text and name stay as they were cost a join.
            flips := format($q$SELECT d.token, d.id, count(*) = 1 AS approved,
                count(*) FILTER (WHERE d.in_name) = 1 AS in_name
              FROM (
                SELECT p.token, o.id, p.in_name
                FROM old_rows o JOIN new_rows n ON n.id = o.id,
                  %1$s(o.search_text, lower(bookcase_unaccent(o.name))) p
                WHERE o.status = 'approved'
                  AND (n.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                       OR n.name IS DISTINCT FROM o.name)
                UNION ALL
                SELECT p.token, n.id, p.in_name
                FROM old_rows o JOIN new_rows n ON n.id = o.id,
                  %1$s(n.search_text, lower(bookcase_unaccent(n.name))) p
                WHERE n.status = 'approved'
                  AND (o.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                       OR n.name IS DISTINCT FROM o.name)
              ) d GROUP BY d.token, d.id$q$, keys);
          END IF;
          EXECUTE format($s$
            WITH toggled AS (
              INSERT INTO %1$I AS s (token, chunk, approved, in_name)
              SELECT f.token, f.id >> 13,
                     bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.approved), '{}')),
                     bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.in_name), '{}'))
              FROM (%2$s) f WHERE f.approved OR f.in_name
              GROUP BY 1, 2 ORDER BY 1, 2
              ON CONFLICT (token, chunk) DO UPDATE
                SET approved = s.approved # excluded.approved, in_name = s.in_name # excluded.in_name
              RETURNING s.token, s.chunk, s.approved)
            SELECT array_agg(t.token), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
          $s$, TG_ARGV[0], flips) INTO empty_tokens, empty_chunks;
          IF empty_tokens IS NOT NULL THEN
            EXECUTE format($d$
              DELETE FROM %I s USING unnest($1, $2) AS e(token, chunk)
              WHERE s.token = e.token AND s.chunk = e.chunk AND bit_count(s.approved) = 0
            $d$, TG_ARGV[0]) USING empty_tokens, empty_chunks;
          END IF;
          RETURN NULL;
        END
        $_$;

--
-- Name: bookcase_search_gram(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_gram(folded text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
          SELECT char_length(folded) BETWEEN 1 AND 2 AND strpos(folded, ' ') = 0
        $$;

--
-- Name: bookcase_search_grams(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_grams(folded text, folded_name text) RETURNS TABLE(token text, in_name boolean)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
          SELECT g.token, bool_or(d.in_name)
          FROM (SELECT false AS in_name, folded AS t UNION ALL SELECT true, folded_name) d
          CROSS JOIN LATERAL (
            SELECT c AS token FROM string_to_table(d.t, NULL) c
            UNION ALL
            SELECT m[1] FROM regexp_matches(d.t, '..', 'g') m
            UNION ALL
            SELECT m[1] FROM regexp_matches(substr(d.t, 2), '..', 'g') m) g
          WHERE strpos(g.token, ' ') = 0
          GROUP BY g.token
        $$;

--
-- Name: bookcase_search_prefixed(text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_prefixed(lexemes text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
        SELECT coalesce(bool_and(char_length(x) <= 24), false) FROM unnest(lexemes) x
      $$;

--
-- Name: bookcase_search_prefixes(tsvector); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_prefixes(vector tsvector) RETURNS TABLE(prefix text, in_name boolean)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
        SELECT left(u.lexeme, n), bool_or('A' = ANY (u.weights))
        FROM unnest(vector) u, generate_series(1, least(char_length(u.lexeme), 24)) n
        GROUP BY 1
      $$;

--
-- Name: bookcase_search_prefixes_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_prefixes_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO library_search_prefixes AS s (prefix, approved, in_name)
          SELECT p.prefix, count(*), count(*) FILTER (WHERE p.in_name)
          FROM new_rows n, bookcase_search_prefixes(n.search_vector) p WHERE n.status = 'approved'
          GROUP BY 1 ORDER BY 1
          ON CONFLICT (prefix) DO UPDATE
            SET approved = s.approved + excluded.approved, in_name = s.in_name + excluded.in_name;
        ELSE
          INSERT INTO library_search_prefixes AS s (prefix, approved, in_name)
          SELECT p.prefix, -count(*), -count(*) FILTER (WHERE p.in_name)
          FROM old_rows o, bookcase_search_prefixes(o.search_vector) p WHERE o.status = 'approved'
          GROUP BY 1 ORDER BY 1
          ON CONFLICT (prefix) DO UPDATE
            SET approved = s.approved + excluded.approved, in_name = s.in_name + excluded.in_name;
        END IF;
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_search_prefixes_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_prefixes_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        INSERT INTO library_search_prefixes AS s (prefix, approved, in_name)
        SELECT p.prefix, sum(d.delta), coalesce(sum(d.delta) FILTER (WHERE p.in_name), 0)
        FROM (
          SELECT o.search_vector AS vector, -1 AS delta FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE o.status = 'approved'
            AND (n.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
          UNION ALL
          SELECT n.search_vector, 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE n.status = 'approved'
            AND (o.status <> 'approved' OR n.search_vector IS DISTINCT FROM o.search_vector)
        ) d, bookcase_search_prefixes(d.vector) p
        GROUP BY 1
        HAVING sum(d.delta) <> 0 OR coalesce(sum(d.delta) FILTER (WHERE p.in_name), 0) <> 0
        ORDER BY 1
        ON CONFLICT (prefix) DO UPDATE
          SET approved = s.approved + excluded.approved, in_name = s.in_name + excluded.in_name;
        RETURN NULL;
      END
      $$;

--
-- Name: bookcase_search_tokenized(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_tokenized(folded text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
        SELECT char_length(folded) BETWEEN 3 AND 100 AND cardinality(string_to_array(folded, ' ')) <= 2
          AND folded ~ '[[:alnum:]]{3}'
      $$;

--
-- Name: bookcase_search_tokens(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_tokens(folded text, folded_name text) RETURNS TABLE(token text, in_name boolean)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
        SELECT p.piece, bool_or(d.in_name)
        FROM (SELECT false AS in_name, string_to_array(folded, ' ') AS a
              UNION ALL
              SELECT true, string_to_array(folded_name, ' ')) d
        CROSS JOIN LATERAL (
          SELECT d.a[i] AS x FROM generate_subscripts(d.a, 1) i
          UNION ALL
          SELECT d.a[i] || ' ' || d.a[i + 1] FROM generate_subscripts(d.a, 1) i WHERE i < cardinality(d.a)) t
        CROSS JOIN LATERAL (
          SELECT t.x AS piece WHERE char_length(t.x) <= 200
          UNION ALL
          SELECT substr(t.x, s, 200) FROM generate_series(1, char_length(t.x) - 99, 100) s
          WHERE char_length(t.x) > 200) p
        WHERE p.piece ~ '[[:alnum:]]{3}'
        GROUP BY p.piece
      $$;

--
-- Name: bookcase_search_tokens_sync(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_tokens_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
      DECLARE
        flips text;
        empty_tokens text[];
        empty_chunks integer[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          flips := $q$SELECT p.token, n.id, true AS approved, p.in_name
            FROM new_rows n, bookcase_search_tokens(n.search_text, lower(bookcase_unaccent(n.name))) p
            WHERE n.status = 'approved'$q$;
        ELSIF TG_OP = 'DELETE' THEN
          flips := $q$SELECT p.token, o.id, true AS approved, p.in_name
            FROM old_rows o, bookcase_search_tokens(o.search_text, lower(bookcase_unaccent(o.name))) p
            WHERE o.status = 'approved'$q$;
        ELSE
          -- What differs between the old approved tokens and the new approved ones: a token on one side only, or in
          -- the name on one side only. Rows whose status, text and name stay as they were cost a join.
          flips := $q$SELECT d.token, d.id, count(*) = 1 AS approved,
              count(*) FILTER (WHERE d.in_name) = 1 AS in_name
            FROM (
              SELECT p.token, o.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id,
                bookcase_search_tokens(o.search_text, lower(bookcase_unaccent(o.name))) p
              WHERE o.status = 'approved'
                AND (n.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                     OR n.name IS DISTINCT FROM o.name)
              UNION ALL
              SELECT p.token, n.id, p.in_name
              FROM old_rows o JOIN new_rows n ON n.id = o.id,
                bookcase_search_tokens(n.search_text, lower(bookcase_unaccent(n.name))) p
              WHERE n.status = 'approved'
                AND (o.status <> 'approved' OR n.search_text IS DISTINCT FROM o.search_text
                     OR n.name IS DISTINCT FROM o.name)
            ) d GROUP BY d.token, d.id$q$;
        END IF;
        EXECUTE format($s$
          WITH toggled AS (
            INSERT INTO library_search_tokens AS s (token, chunk, approved, in_name)
            SELECT f.token, f.id >> 13,
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.approved), '{}')),
                   bookcase_search_bits(coalesce(array_agg(f.id & 8191) FILTER (WHERE f.in_name), '{}'))
            FROM (%s) f WHERE f.approved OR f.in_name
            GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (token, chunk) DO UPDATE
              SET approved = s.approved # excluded.approved, in_name = s.in_name # excluded.in_name
            RETURNING s.token, s.chunk, s.approved)
          SELECT array_agg(t.token), array_agg(t.chunk) FROM toggled t WHERE bit_count(t.approved) = 0
        $s$, flips) INTO empty_tokens, empty_chunks;
        IF empty_tokens IS NOT NULL THEN
          DELETE FROM library_search_tokens s
          USING unnest(empty_tokens, empty_chunks) AS e(token, chunk)
          WHERE s.token = e.token AND s.chunk = e.chunk AND bit_count(s.approved) = 0;
        END IF;
        RETURN NULL;
      END
      $_$;

--
-- Name: bookcase_search_tripled(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_tripled(folded text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
          SELECT char_length(folded) BETWEEN 3 AND 100 AND cardinality(string_to_array(folded, ' ')) = 3
            AND folded ~ '[[:alnum:]]{3}'
        $$;

--
-- Name: bookcase_search_triples(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_triples(folded text, folded_name text) RETURNS TABLE(token text, in_name boolean)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
          SELECT p.piece, bool_or(d.in_name)
          FROM (SELECT false AS in_name, string_to_array(folded, ' ') AS a
                UNION ALL
                SELECT true, string_to_array(folded_name, ' ')) d
          CROSS JOIN LATERAL (
            SELECT d.a[i] || ' ' || d.a[i + 1] || ' ' || d.a[i + 2] AS x
            FROM generate_subscripts(d.a, 1) i WHERE i + 2 <= cardinality(d.a)) t
          CROSS JOIN LATERAL (
            SELECT t.x AS piece WHERE char_length(t.x) <= 200
            UNION ALL
            SELECT substr(t.x, s, 200) FROM generate_series(1, char_length(t.x) - 99, 100) s
            WHERE char_length(t.x) > 200) p
          WHERE p.piece ~ '[[:alnum:]]{3}'
          GROUP BY p.piece
        $$;

--
-- Name: bookcase_search_walk(text[], character, boolean, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_search_walk(lexemes text[], in_country character, name_part boolean, reach integer) RETURNS TABLE(library_id integer, library_created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    AS $$
      DECLARE
        bits bytea;
      BEGIN
        SELECT string_agg(y.gap || y.part_bits, ''::bytea ORDER BY y.chunk) INTO bits
        FROM (SELECT m.chunk,
                     decode(repeat('00', 1024 * (m.chunk - coalesce(lag(m.chunk) OVER (ORDER BY m.chunk), -1) - 1)),
                            'hex') AS gap,
                     substring(varbit_send(CASE WHEN name_part THEN m.named ELSE m.matched & ~m.named END) FROM 5)
                       AS part_bits
              FROM (SELECT x.chunk, bit_and(x.approved) AS matched, bit_and(x.in_name) AS named FROM (
                      SELECT s.chunk, s.approved, s.in_name FROM library_search_bitmaps s
                      WHERE s.prefix = ANY (lexemes)
                      UNION ALL
                      SELECT k.chunk, k.approved, k.approved FROM library_country_bitmaps k
                      WHERE k.country = in_country) x
                    GROUP BY x.chunk
                    HAVING count(*) = cardinality(lexemes) + (in_country IS NOT NULL)::int) m) y;
        IF bits IS NULL THEN
          RETURN;
        END IF;
        -- The LIMIT of no effect keeps the test above the ordered walk (see list-query.ts, textPageQuery). With a
        -- country, its own index (libraries_approved_country_created_idx): only its libraries are walked.
        IF in_country IS NULL THEN
          RETURN QUERY
            SELECT l.id, l.created_at FROM (
              SELECT l.id, l.created_at FROM libraries l WHERE l.status = 'approved'
              ORDER BY l.created_at DESC, l.id DESC LIMIT (SELECT 9007199254740991::bigint)) l
            WHERE CASE WHEN (l.id >> 3) < octet_length(bits) THEN get_bit(bits, l.id # 7) = 1 ELSE false END
            ORDER BY l.created_at DESC, l.id DESC LIMIT reach;
        ELSE
          RETURN QUERY
            SELECT l.id, l.created_at FROM (
              SELECT l.id, l.created_at FROM libraries l WHERE l.status = 'approved' AND l.country = in_country
              ORDER BY l.created_at DESC, l.id DESC LIMIT (SELECT 9007199254740991::bigint)) l
            WHERE CASE WHEN (l.id >> 3) < octet_length(bits) THEN get_bit(bits, l.id # 7) = 1 ELSE false END
            ORDER BY l.created_at DESC, l.id DESC LIMIT reach;
        END IF;
      END
      $$;

--
-- Name: bookcase_short_grams(character, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_short_grams(country character, value text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
        SELECT coalesce(array_agg(DISTINCT country || substr(value, i, n)), '{}')
        FROM generate_series(1, 2) AS n, generate_series(1, char_length(value) - n + 1) AS i
      $$;

--
-- Name: bookcase_unaccent(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_unaccent(text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $_$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $_$;

--
-- Name: bookcase_unit_vector(public.geography); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bookcase_unit_vector(g public.geography) RETURNS public.geometry
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT public.ST_MakePoint(
                cos(radians(public.ST_Y(g::public.geometry))) * cos(radians(public.ST_X(g::public.geometry))),
                cos(radians(public.ST_Y(g::public.geometry))) * sin(radians(public.ST_X(g::public.geometry))),
                sin(radians(public.ST_Y(g::public.geometry)))) $$;

--
-- Name: map_contribution_events_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.map_contribution_events_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        RAISE EXCEPTION 'map_contribution_events is append-only';
      END $$;

--
-- Name: moderation_audit_events_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.moderation_audit_events_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
      BEGIN
        RAISE EXCEPTION 'moderation_audit_events is append-only';
      END $$;

--
-- Name: bookcase_bit_cat(bit varying); Type: AGGREGATE; Schema: public; Owner: -
--

CREATE AGGREGATE public.bookcase_bit_cat(bit varying) (
    SFUNC = bitcat,
    STYPE = bit varying,
    INITCOND = ''
);

SET default_table_access_method = heap;

--
-- Name: console_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.console_sessions (
    token_hash bytea NOT NULL,
    session_id uuid NOT NULL,
    csrf_token character varying(64) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL
);

--
-- Name: contributor_agreements; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contributor_agreements (
    id integer NOT NULL,
    user_id integer NOT NULL,
    version character varying(64) NOT NULL,
    channel character varying(16) NOT NULL,
    accepted_at timestamp with time zone NOT NULL,
    CONSTRAINT contributor_agreements_channel_check CHECK (((channel)::text = ANY ((ARRAY['api'::character varying, 'console'::character varying])::text[])))
);

--
-- Name: contributor_agreements_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.contributor_agreements_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: contributor_agreements_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.contributor_agreements_id_seq OWNED BY public.contributor_agreements.id;

--
-- Name: device_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.device_tokens (
    id integer NOT NULL,
    token character varying(512) NOT NULL,
    environment character varying(16) NOT NULL,
    is_active boolean DEFAULT true NOT NULL,
    user_id integer NOT NULL,
    session_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT device_tokens_environment_check CHECK (((environment)::text = ANY ((ARRAY['sandbox'::character varying, 'production'::character varying])::text[])))
);

--
-- Name: device_tokens_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.device_tokens_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: device_tokens_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.device_tokens_id_seq OWNED BY public.device_tokens.id;

--
-- Name: enrichment_jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.enrichment_jobs (
    id integer NOT NULL,
    library_id integer NOT NULL,
    status character varying(9) DEFAULT 'queued'::character varying NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    locked_until timestamp with time zone,
    last_error text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT enrichment_jobs_status_check CHECK (((status)::text = ANY ((ARRAY['queued'::character varying, 'running'::character varying, 'done'::character varying, 'failed'::character varying])::text[])))
);

--
-- Name: enrichment_jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.enrichment_jobs_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: enrichment_jobs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.enrichment_jobs_id_seq OWNED BY public.enrichment_jobs.id;

--
-- Name: export_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.export_versions (
    id integer NOT NULL,
    status character varying(16) NOT NULL,
    file_stem character varying(100) NOT NULL,
    generated_at timestamp with time zone NOT NULL,
    record_count integer DEFAULT 0 NOT NULL,
    geojson_key character varying(255) NOT NULL,
    geojson_bytes bigint DEFAULT 0 NOT NULL,
    geojson_sha256 character(64),
    gz_key character varying(255) NOT NULL,
    gz_bytes bigint DEFAULT 0 NOT NULL,
    gz_sha256 character(64),
    metadata_key character varying(255) NOT NULL,
    metadata_bytes bigint DEFAULT 0 NOT NULL,
    metadata_sha256 character(64),
    CONSTRAINT export_versions_status_check CHECK (((status)::text = ANY ((ARRAY['building'::character varying, 'published'::character varying])::text[])))
);

--
-- Name: export_versions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.export_versions_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: export_versions_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.export_versions_id_seq OWNED BY public.export_versions.id;

--
-- Name: favourites; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.favourites (
    user_id integer NOT NULL,
    library_id integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    library_approved boolean DEFAULT false NOT NULL
);

--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    user_id integer NOT NULL,
    key character varying(128) NOT NULL,
    scope character varying(64) NOT NULL,
    fingerprint character(64) NOT NULL,
    resource_id integer NOT NULL,
    response_status smallint NOT NULL,
    response_body jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: libraries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.libraries (
    id integer NOT NULL,
    slug character varying(255) NOT NULL,
    name character varying(255) DEFAULT ''::character varying NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    address character varying(255) DEFAULT ''::character varying NOT NULL,
    city character varying(100) NOT NULL,
    country character(2) NOT NULL,
    postal_code character varying(20) DEFAULT ''::character varying NOT NULL,
    wheelchair_accessible character varying(7) DEFAULT ''::character varying NOT NULL,
    capacity integer,
    is_indoor boolean,
    is_lit boolean,
    website character varying(500) DEFAULT ''::character varying NOT NULL,
    contact character varying(255) DEFAULT ''::character varying NOT NULL,
    operator character varying(255) DEFAULT ''::character varying NOT NULL,
    brand character varying(255) DEFAULT ''::character varying NOT NULL,
    source character varying(100) DEFAULT ''::character varying NOT NULL,
    external_id character varying(255) DEFAULT ''::character varying NOT NULL,
    photo_key character varying(255),
    thumbnail_key character varying(255),
    location public.geography(Point,4326) NOT NULL,
    status character varying(8) DEFAULT 'pending'::character varying NOT NULL,
    rejection_reason text DEFAULT ''::text NOT NULL,
    mapdb_submission_allowed boolean DEFAULT false NOT NULL,
    mapdb_submission_allowed_at timestamp with time zone,
    submission_origin character varying(6) DEFAULT 'legacy'::character varying NOT NULL,
    created_by integer,
    pending_changes jsonb,
    pending_photo jsonb,
    ai_generated_fields text[] DEFAULT '{}'::text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    search_vector tsvector GENERATED ALWAYS AS ((setweight(to_tsvector('simple'::regconfig, public.bookcase_unaccent((name)::text)), 'A'::"char") || setweight(to_tsvector('simple'::regconfig, public.bookcase_unaccent(description)), 'B'::"char"))) STORED,
    search_text text GENERATED ALWAYS AS (lower(public.bookcase_unaccent((((((((((name)::text || ' '::text) || description) || ' '::text) || (city)::text) || ' '::text) || (address)::text) || ' '::text) || (postal_code)::text)))) STORED,
    CONSTRAINT libraries_capacity_check CHECK (((capacity IS NULL) OR (capacity >= 0))),
    CONSTRAINT libraries_country_check CHECK ((country ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT libraries_origin_check CHECK (((submission_origin)::text = ANY ((ARRAY['legacy'::character varying, 'user'::character varying, 'staff'::character varying, 'import'::character varying])::text[]))),
    CONSTRAINT libraries_permission_time_check CHECK ((mapdb_submission_allowed OR (mapdb_submission_allowed_at IS NULL))),
    CONSTRAINT libraries_status_check CHECK (((status)::text = ANY ((ARRAY['pending'::character varying, 'approved'::character varying, 'rejected'::character varying])::text[]))),
    CONSTRAINT libraries_wheelchair_check CHECK (((wheelchair_accessible)::text = ANY ((ARRAY[''::character varying, 'yes'::character varying, 'no'::character varying, 'limited'::character varying])::text[])))
);

--
-- Name: libraries_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.libraries_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: libraries_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.libraries_id_seq OWNED BY public.libraries.id;

--
-- Name: library_city_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_city_counts (
    city character varying(100) NOT NULL,
    country character(2) NOT NULL,
    approved integer NOT NULL,
    with_photo integer NOT NULL
);

--
-- Name: library_country_bitmaps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_country_bitmaps (
    country character(2) NOT NULL,
    chunk integer NOT NULL,
    approved bit(8192) NOT NULL
);

--
-- Name: library_country_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_country_counts (
    country character(2) NOT NULL,
    approved integer NOT NULL,
    with_photo integer NOT NULL
);

--
-- Name: library_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_counts (
    country character(2) NOT NULL,
    day date NOT NULL,
    approved integer NOT NULL,
    with_photo integer NOT NULL
);

--
-- Name: library_map_cells; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_map_cells (
    level smallint NOT NULL,
    cx integer NOT NULL,
    cy integer NOT NULL,
    count integer NOT NULL,
    sum_lng double precision NOT NULL,
    sum_lat double precision NOT NULL,
    min_lng double precision NOT NULL,
    min_lat double precision NOT NULL,
    max_lng double precision NOT NULL,
    max_lat double precision NOT NULL,
    min_id integer NOT NULL,
    country character(2) NOT NULL,
    has_photo boolean NOT NULL,
    CONSTRAINT library_map_cells_count_check CHECK ((count > 0))
);

--
-- Name: library_photos; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_photos (
    id integer NOT NULL,
    library_id integer NOT NULL,
    created_by integer,
    caption character varying(200) DEFAULT ''::character varying NOT NULL,
    photo_key character varying(255) NOT NULL,
    thumbnail_key character varying(255) NOT NULL,
    status character varying(8) DEFAULT 'pending'::character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT library_photos_status_check CHECK (((status)::text = ANY ((ARRAY['pending'::character varying, 'approved'::character varying, 'rejected'::character varying])::text[])))
);

--
-- Name: library_photos_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.library_photos_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: library_photos_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.library_photos_id_seq OWNED BY public.library_photos.id;

--
-- Name: library_place_grams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_place_grams (
    gram character varying(40) NOT NULL,
    country character(2) NOT NULL,
    approved integer NOT NULL,
    with_photo integer NOT NULL
);

--
-- Name: library_place_pairs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_place_pairs (
    city character varying(100) NOT NULL,
    country character(2) NOT NULL,
    postal_code character varying(20) NOT NULL,
    approved integer NOT NULL,
    with_photo integer NOT NULL
);

--
-- Name: library_postal_code_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_postal_code_counts (
    postal_code character varying(20) NOT NULL,
    country character(2) NOT NULL,
    approved integer NOT NULL,
    with_photo integer NOT NULL
);

--
-- Name: library_search_bitmaps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_search_bitmaps (
    prefix text NOT NULL,
    chunk integer NOT NULL,
    approved bit(8192) NOT NULL,
    in_name bit(8192) NOT NULL
);
ALTER TABLE ONLY public.library_search_bitmaps ALTER COLUMN approved SET STORAGE MAIN;
ALTER TABLE ONLY public.library_search_bitmaps ALTER COLUMN in_name SET STORAGE MAIN;

--
-- Name: library_search_grams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_search_grams (
    token text NOT NULL,
    chunk integer NOT NULL,
    approved bit(8192) NOT NULL,
    in_name bit(8192) NOT NULL
)
WITH (toast_tuple_target='128');
ALTER TABLE ONLY public.library_search_grams ALTER COLUMN approved SET STORAGE MAIN;
ALTER TABLE ONLY public.library_search_grams ALTER COLUMN in_name SET STORAGE MAIN;

--
-- Name: library_search_prefixes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_search_prefixes (
    prefix text NOT NULL,
    approved integer NOT NULL,
    in_name integer NOT NULL
);

--
-- Name: library_search_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_search_tokens (
    token text NOT NULL,
    chunk integer NOT NULL,
    approved bit(8192) NOT NULL,
    in_name bit(8192) NOT NULL
)
WITH (toast_tuple_target='128');
ALTER TABLE ONLY public.library_search_tokens ALTER COLUMN approved SET STORAGE MAIN;
ALTER TABLE ONLY public.library_search_tokens ALTER COLUMN in_name SET STORAGE MAIN;

--
-- Name: library_search_triples; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.library_search_triples (
    token text NOT NULL,
    chunk integer NOT NULL,
    approved bit(8192) NOT NULL,
    in_name bit(8192) NOT NULL
)
WITH (toast_tuple_target='128');
ALTER TABLE ONLY public.library_search_triples ALTER COLUMN approved SET STORAGE MAIN;
ALTER TABLE ONLY public.library_search_triples ALTER COLUMN in_name SET STORAGE MAIN;

--
-- Name: map_contribution_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.map_contribution_events (
    id bigint NOT NULL,
    contribution_id integer NOT NULL,
    library_id integer NOT NULL,
    event_type character varying(40) NOT NULL,
    outcome character varying(20) NOT NULL,
    actor_id integer,
    actor_username character varying(150),
    attempt_key uuid,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: map_contribution_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.map_contribution_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: map_contribution_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.map_contribution_events_id_seq OWNED BY public.map_contribution_events.id;

--
-- Name: map_contributions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.map_contributions (
    id integer NOT NULL,
    library_id integer NOT NULL,
    status character varying(20) DEFAULT 'unchecked'::character varying NOT NULL,
    checked_at timestamp with time zone,
    last_check_failed boolean DEFAULT false NOT NULL,
    duplicate_candidates jsonb DEFAULT '[]'::jsonb NOT NULL,
    resolved_different jsonb DEFAULT '[]'::jsonb NOT NULL,
    mapdb_element_type character varying(8),
    mapdb_element_id bigint,
    changeset_id bigint,
    contributed_at timestamp with time zone,
    contributed_by integer,
    last_attempt_key uuid,
    last_error_code character varying(64) DEFAULT ''::character varying NOT NULL,
    last_error_message text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT map_contributions_element_pair_check CHECK (((mapdb_element_type IS NULL) = (mapdb_element_id IS NULL))),
    CONSTRAINT map_contributions_element_type_check CHECK (((mapdb_element_type IS NULL) OR ((mapdb_element_type)::text = ANY ((ARRAY['node'::character varying, 'way'::character varying, 'relation'::character varying])::text[])))),
    CONSTRAINT map_contributions_status_check CHECK (((status)::text = ANY ((ARRAY['unchecked'::character varying, 'no_match'::character varying, 'possible_duplicate'::character varying, 'already_present'::character varying, 'submitting'::character varying, 'contributed'::character varying, 'failed'::character varying])::text[])))
);

--
-- Name: map_contributions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.map_contributions_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: map_contributions_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.map_contributions_id_seq OWNED BY public.map_contributions.id;

--
-- Name: map_write_state; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.map_write_state (
    id smallint DEFAULT 1 NOT NULL,
    token_fingerprint character varying(64) NOT NULL,
    write_api_allowed boolean DEFAULT false NOT NULL,
    permissions_checked_at timestamp with time zone,
    disabled_at timestamp with time zone,
    disabled_reason character varying(64) DEFAULT ''::character varying NOT NULL,
    CONSTRAINT map_write_state_singleton CHECK ((id = 1))
);

--
-- Name: moderation_audit_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.moderation_audit_events (
    id bigint NOT NULL,
    kind character varying(40) NOT NULL,
    actor_id integer,
    actor_username character varying(150),
    library_id integer,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: moderation_audit_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.moderation_audit_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: moderation_audit_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.moderation_audit_events_id_seq OWNED BY public.moderation_audit_events.id;

--
-- Name: notification_jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_jobs (
    id bigint NOT NULL,
    channel character varying(8) NOT NULL,
    kind character varying(40) NOT NULL,
    user_id integer,
    recipient character varying(254),
    device_token_id integer,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    collapse_key character varying(80),
    status character varying(10) DEFAULT 'queued'::character varying NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    run_after timestamp with time zone NOT NULL,
    locked_until timestamp with time zone,
    claimed_at timestamp with time zone,
    last_error character varying(200) DEFAULT ''::character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT notification_jobs_channel_check CHECK (((channel)::text = ANY ((ARRAY['email'::character varying, 'push'::character varying])::text[]))),
    CONSTRAINT notification_jobs_status_check CHECK (((status)::text = ANY ((ARRAY['queued'::character varying, 'running'::character varying, 'sent'::character varying, 'skipped'::character varying, 'failed'::character varying])::text[]))),
    CONSTRAINT notification_jobs_target_check CHECK (((((channel)::text = 'email'::text) AND (recipient IS NOT NULL)) OR (((channel)::text = 'push'::text) AND (device_token_id IS NOT NULL))))
);

--
-- Name: notification_jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.notification_jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: notification_jobs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.notification_jobs_id_seq OWNED BY public.notification_jobs.id;

--
-- Name: password_reset_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.password_reset_tokens (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    token_hash bytea NOT NULL,
    job_id bigint,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

--
-- Name: password_reset_tokens_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.password_reset_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: password_reset_tokens_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.password_reset_tokens_id_seq OWNED BY public.password_reset_tokens.id;

--
-- Name: refresh_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.refresh_sessions (
    id uuid NOT NULL,
    user_id integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    last_used_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone
);

--
-- Name: reports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reports (
    id integer NOT NULL,
    library_id integer NOT NULL,
    created_by integer,
    reason character varying(20) NOT NULL,
    details text DEFAULT ''::text NOT NULL,
    photo_key character varying(255),
    thumbnail_key character varying(255),
    status character varying(9) DEFAULT 'open'::character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT reports_reason_check CHECK (((reason)::text = ANY ((ARRAY['damaged'::character varying, 'missing'::character varying, 'incorrect_info'::character varying, 'inappropriate'::character varying, 'other'::character varying])::text[]))),
    CONSTRAINT reports_status_check CHECK (((status)::text = ANY ((ARRAY['open'::character varying, 'resolved'::character varying, 'dismissed'::character varying])::text[])))
);

--
-- Name: reports_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.reports_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: reports_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.reports_id_seq OWNED BY public.reports.id;

--
-- Name: scheduled_tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scheduled_tasks (
    name character varying(64) NOT NULL,
    next_run_at timestamp with time zone NOT NULL,
    locked_until timestamp with time zone,
    lease_id uuid,
    last_started_at timestamp with time zone,
    last_finished_at timestamp with time zone,
    last_outcome character varying(32) DEFAULT ''::character varying NOT NULL,
    last_error character varying(200) DEFAULT ''::character varying NOT NULL
);

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    id integer NOT NULL,
    "timestamp" bigint NOT NULL,
    name character varying NOT NULL
);

--
-- Name: schema_migrations_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.schema_migrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: schema_migrations_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.schema_migrations_id_seq OWNED BY public.schema_migrations.id;

--
-- Name: social_identities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.social_identities (
    id integer NOT NULL,
    provider character varying(16) NOT NULL,
    subject character varying(255) NOT NULL,
    user_id integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT social_identities_provider_check CHECK (((provider)::text = ANY ((ARRAY['apple'::character varying, 'google'::character varying])::text[])))
);

--
-- Name: social_identities_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.social_identities_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: social_identities_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.social_identities_id_seq OWNED BY public.social_identities.id;

--
-- Name: used_identity_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.used_identity_tokens (
    key character varying(128) NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id integer NOT NULL,
    username character varying(150) NOT NULL,
    email character varying(254) NOT NULL,
    password_hash text,
    is_staff boolean DEFAULT false NOT NULL,
    is_active boolean DEFAULT true NOT NULL,
    first_name character varying(150) DEFAULT ''::character varying NOT NULL,
    last_name character varying(150) DEFAULT ''::character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_login_at timestamp with time zone,
    notify_email boolean DEFAULT true NOT NULL,
    notify_push boolean DEFAULT true NOT NULL
);

--
-- Name: users_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.users_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: users_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.users_id_seq OWNED BY public.users.id;

--
-- Name: contributor_agreements id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contributor_agreements ALTER COLUMN id SET DEFAULT nextval('public.contributor_agreements_id_seq'::regclass);

--
-- Name: device_tokens id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens ALTER COLUMN id SET DEFAULT nextval('public.device_tokens_id_seq'::regclass);

--
-- Name: enrichment_jobs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.enrichment_jobs ALTER COLUMN id SET DEFAULT nextval('public.enrichment_jobs_id_seq'::regclass);

--
-- Name: export_versions id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_versions ALTER COLUMN id SET DEFAULT nextval('public.export_versions_id_seq'::regclass);

--
-- Name: libraries id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.libraries ALTER COLUMN id SET DEFAULT nextval('public.libraries_id_seq'::regclass);

--
-- Name: library_photos id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_photos ALTER COLUMN id SET DEFAULT nextval('public.library_photos_id_seq'::regclass);

--
-- Name: map_contribution_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contribution_events ALTER COLUMN id SET DEFAULT nextval('public.map_contribution_events_id_seq'::regclass);

--
-- Name: map_contributions id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contributions ALTER COLUMN id SET DEFAULT nextval('public.map_contributions_id_seq'::regclass);

--
-- Name: moderation_audit_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.moderation_audit_events ALTER COLUMN id SET DEFAULT nextval('public.moderation_audit_events_id_seq'::regclass);

--
-- Name: notification_jobs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_jobs ALTER COLUMN id SET DEFAULT nextval('public.notification_jobs_id_seq'::regclass);

--
-- Name: password_reset_tokens id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_reset_tokens ALTER COLUMN id SET DEFAULT nextval('public.password_reset_tokens_id_seq'::regclass);

--
-- Name: reports id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports ALTER COLUMN id SET DEFAULT nextval('public.reports_id_seq'::regclass);

--
-- Name: schema_migrations id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations ALTER COLUMN id SET DEFAULT nextval('public.schema_migrations_id_seq'::regclass);

--
-- Name: social_identities id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.social_identities ALTER COLUMN id SET DEFAULT nextval('public.social_identities_id_seq'::regclass);

--
-- Name: users id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users ALTER COLUMN id SET DEFAULT nextval('public.users_id_seq'::regclass);

--
-- Name: schema_migrations PK_62441bec32630ced9e4cccae336; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT "PK_62441bec32630ced9e4cccae336" PRIMARY KEY (id);

--
-- Name: console_sessions console_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_pkey PRIMARY KEY (token_hash);

--
-- Name: console_sessions console_sessions_session_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_session_key UNIQUE (session_id);

--
-- Name: contributor_agreements contributor_agreements_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contributor_agreements
    ADD CONSTRAINT contributor_agreements_pkey PRIMARY KEY (id);

--
-- Name: contributor_agreements contributor_agreements_user_id_version_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contributor_agreements
    ADD CONSTRAINT contributor_agreements_user_id_version_key UNIQUE (user_id, version);

--
-- Name: device_tokens device_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens
    ADD CONSTRAINT device_tokens_pkey PRIMARY KEY (id);

--
-- Name: device_tokens device_tokens_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens
    ADD CONSTRAINT device_tokens_token_key UNIQUE (token);

--
-- Name: enrichment_jobs enrichment_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.enrichment_jobs
    ADD CONSTRAINT enrichment_jobs_pkey PRIMARY KEY (id);

--
-- Name: export_versions export_versions_file_stem_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_versions
    ADD CONSTRAINT export_versions_file_stem_key UNIQUE (file_stem);

--
-- Name: export_versions export_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_versions
    ADD CONSTRAINT export_versions_pkey PRIMARY KEY (id);

--
-- Name: favourites favourites_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.favourites
    ADD CONSTRAINT favourites_pkey PRIMARY KEY (user_id, library_id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key);

--
-- Name: libraries libraries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.libraries
    ADD CONSTRAINT libraries_pkey PRIMARY KEY (id);

--
-- Name: libraries libraries_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.libraries
    ADD CONSTRAINT libraries_slug_key UNIQUE (slug);

--
-- Name: library_city_counts library_city_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_city_counts
    ADD CONSTRAINT library_city_counts_pkey PRIMARY KEY (city, country);

--
-- Name: library_country_bitmaps library_country_bitmaps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_country_bitmaps
    ADD CONSTRAINT library_country_bitmaps_pkey PRIMARY KEY (country, chunk);

--
-- Name: library_country_counts library_country_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_country_counts
    ADD CONSTRAINT library_country_counts_pkey PRIMARY KEY (country);

--
-- Name: library_counts library_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_counts
    ADD CONSTRAINT library_counts_pkey PRIMARY KEY (country, day);

--
-- Name: library_map_cells library_map_cells_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_map_cells
    ADD CONSTRAINT library_map_cells_pkey PRIMARY KEY (level, cx, cy, country, has_photo) INCLUDE (count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id);

--
-- Name: library_photos library_photos_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_photos
    ADD CONSTRAINT library_photos_pkey PRIMARY KEY (id);

--
-- Name: library_place_grams library_place_grams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_place_grams
    ADD CONSTRAINT library_place_grams_pkey PRIMARY KEY (gram, country);

--
-- Name: library_place_pairs library_place_pairs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_place_pairs
    ADD CONSTRAINT library_place_pairs_pkey PRIMARY KEY (city, country, postal_code) INCLUDE (approved, with_photo);

--
-- Name: library_postal_code_counts library_postal_code_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_postal_code_counts
    ADD CONSTRAINT library_postal_code_counts_pkey PRIMARY KEY (postal_code, country);

--
-- Name: library_search_bitmaps library_search_bitmaps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_search_bitmaps
    ADD CONSTRAINT library_search_bitmaps_pkey PRIMARY KEY (prefix, chunk);

--
-- Name: library_search_grams library_search_grams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_search_grams
    ADD CONSTRAINT library_search_grams_pkey PRIMARY KEY (token, chunk);

--
-- Name: library_search_prefixes library_search_prefixes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_search_prefixes
    ADD CONSTRAINT library_search_prefixes_pkey PRIMARY KEY (prefix);

--
-- Name: library_search_tokens library_search_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_search_tokens
    ADD CONSTRAINT library_search_tokens_pkey PRIMARY KEY (token, chunk);

--
-- Name: library_search_triples library_search_triples_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_search_triples
    ADD CONSTRAINT library_search_triples_pkey PRIMARY KEY (token, chunk);

--
-- Name: map_contribution_events map_contribution_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contribution_events
    ADD CONSTRAINT map_contribution_events_pkey PRIMARY KEY (id);

--
-- Name: map_contributions map_contributions_attempt_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contributions
    ADD CONSTRAINT map_contributions_attempt_key UNIQUE (last_attempt_key);

--
-- Name: map_contributions map_contributions_library_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contributions
    ADD CONSTRAINT map_contributions_library_key UNIQUE (library_id);

--
-- Name: map_contributions map_contributions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contributions
    ADD CONSTRAINT map_contributions_pkey PRIMARY KEY (id);

--
-- Name: map_write_state map_write_state_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_write_state
    ADD CONSTRAINT map_write_state_pkey PRIMARY KEY (id);

--
-- Name: moderation_audit_events moderation_audit_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.moderation_audit_events
    ADD CONSTRAINT moderation_audit_events_pkey PRIMARY KEY (id);

--
-- Name: notification_jobs notification_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_jobs
    ADD CONSTRAINT notification_jobs_pkey PRIMARY KEY (id);

--
-- Name: password_reset_tokens password_reset_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_reset_tokens
    ADD CONSTRAINT password_reset_tokens_pkey PRIMARY KEY (id);

--
-- Name: password_reset_tokens password_reset_tokens_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_reset_tokens
    ADD CONSTRAINT password_reset_tokens_token_hash_key UNIQUE (token_hash);

--
-- Name: refresh_sessions refresh_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refresh_sessions
    ADD CONSTRAINT refresh_sessions_pkey PRIMARY KEY (id);

--
-- Name: reports reports_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_pkey PRIMARY KEY (id);

--
-- Name: scheduled_tasks scheduled_tasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scheduled_tasks
    ADD CONSTRAINT scheduled_tasks_pkey PRIMARY KEY (name);

--
-- Name: social_identities social_identities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.social_identities
    ADD CONSTRAINT social_identities_pkey PRIMARY KEY (id);

--
-- Name: social_identities social_identities_provider_subject_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.social_identities
    ADD CONSTRAINT social_identities_provider_subject_key UNIQUE (provider, subject);

--
-- Name: used_identity_tokens used_identity_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.used_identity_tokens
    ADD CONSTRAINT used_identity_tokens_pkey PRIMARY KEY (key);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

--
-- Name: console_sessions_last_seen_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX console_sessions_last_seen_at_idx ON public.console_sessions USING btree (last_seen_at);

--
-- Name: contributor_agreements_user_accepted_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contributor_agreements_user_accepted_idx ON public.contributor_agreements USING btree (user_id, accepted_at DESC, id DESC);

--
-- Name: device_tokens_session_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX device_tokens_session_id_idx ON public.device_tokens USING btree (session_id);

--
-- Name: device_tokens_user_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX device_tokens_user_id_idx ON public.device_tokens USING btree (user_id);

--
-- Name: enrichment_jobs_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX enrichment_jobs_due_idx ON public.enrichment_jobs USING btree (run_after) WHERE ((status)::text = ANY ((ARRAY['queued'::character varying, 'running'::character varying])::text[]));

--
-- Name: enrichment_jobs_library_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX enrichment_jobs_library_idx ON public.enrichment_jobs USING btree (library_id);

--
-- Name: export_versions_status_generated_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX export_versions_status_generated_idx ON public.export_versions USING btree (status, generated_at DESC, id DESC);

--
-- Name: favourites_library_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX favourites_library_idx ON public.favourites USING btree (library_id);

--
-- Name: favourites_user_approved_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX favourites_user_approved_idx ON public.favourites USING btree (user_id, created_at DESC, library_id DESC) WHERE library_approved;

--
-- Name: idempotency_keys_created_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_created_at_idx ON public.idempotency_keys USING btree (created_at);

--
-- Name: libraries_approved_city_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_city_created_idx ON public.libraries USING btree (city, country, created_at DESC, id DESC) INCLUDE (postal_code) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_country_created_places_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_country_created_places_idx ON public.libraries USING btree (country, created_at DESC, id DESC) INCLUDE (city, postal_code) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_created_places_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_created_places_idx ON public.libraries USING btree (created_at DESC, id DESC) INCLUDE (country, city, postal_code) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_created_search_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_created_search_idx ON public.libraries USING btree (created_at DESC, id DESC) INCLUDE (search_vector) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_id_idx ON public.libraries USING btree (id) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_name_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_name_trgm_idx ON public.libraries USING gin (lower(public.bookcase_unaccent((name)::text)) public.gin_trgm_ops) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_name_vector_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_name_vector_idx ON public.libraries USING gin (to_tsvector('simple'::regconfig, public.bookcase_unaccent((name)::text))) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_point_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_point_idx ON public.libraries USING gist (point(public.st_x((location)::public.geometry), public.st_y((location)::public.geometry))) INCLUDE (location) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_postal_code_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_postal_code_created_idx ON public.libraries USING btree (postal_code, country, created_at DESC, id DESC) INCLUDE (city) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_unit_vector_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_unit_vector_idx ON public.libraries USING gist (public.bookcase_unit_vector(location) public.gist_geometry_ops_nd) WHERE ((status)::text = 'approved'::text);

--
-- Name: libraries_approved_without_photo_city_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_without_photo_city_created_idx ON public.libraries USING btree (city, country, created_at DESC, id DESC) INCLUDE (postal_code) WHERE (((status)::text = 'approved'::text) AND (photo_key IS NULL));

--
-- Name: libraries_approved_without_photo_country_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_without_photo_country_created_idx ON public.libraries USING btree (country, created_at DESC, id DESC) WHERE (((status)::text = 'approved'::text) AND (photo_key IS NULL));

--
-- Name: libraries_approved_without_photo_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_without_photo_created_idx ON public.libraries USING btree (created_at DESC, id DESC) WHERE (((status)::text = 'approved'::text) AND (photo_key IS NULL));

--
-- Name: libraries_approved_without_photo_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_without_photo_idx ON public.libraries USING btree (id) WHERE (((status)::text = 'approved'::text) AND (photo_key IS NULL) AND (id IS NOT NULL));

--
-- Name: libraries_approved_without_photo_postal_code_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_approved_without_photo_postal_code_created_idx ON public.libraries USING btree (postal_code, country, created_at DESC, id DESC) INCLUDE (city) WHERE (((status)::text = 'approved'::text) AND (photo_key IS NULL));

--
-- Name: libraries_city_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_city_trgm_idx ON public.libraries USING gin (lower((city)::text) public.gin_trgm_ops);

--
-- Name: libraries_created_by_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_created_by_idx ON public.libraries USING btree (created_by, created_at DESC);

--
-- Name: libraries_external_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_external_id_idx ON public.libraries USING btree (external_id) WHERE ((external_id)::text <> ''::text);

--
-- Name: libraries_location_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_location_idx ON public.libraries USING gist (location);

--
-- Name: libraries_pending_photo_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_pending_photo_key_idx ON public.libraries USING btree (((pending_photo ->> 'photo_key'::text))) WHERE (pending_photo IS NOT NULL);

--
-- Name: libraries_pending_thumbnail_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_pending_thumbnail_key_idx ON public.libraries USING btree (((pending_photo ->> 'thumbnail_key'::text))) WHERE (pending_photo IS NOT NULL);

--
-- Name: libraries_photo_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_photo_key_idx ON public.libraries USING btree (photo_key) WHERE (photo_key IS NOT NULL);

--
-- Name: libraries_postal_code_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_postal_code_trgm_idx ON public.libraries USING gin (postal_code public.gin_trgm_ops);

--
-- Name: libraries_search_text_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_search_text_trgm_idx ON public.libraries USING gin (search_text public.gin_trgm_ops);

--
-- Name: libraries_search_vector_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_search_vector_idx ON public.libraries USING gin (search_vector);

--
-- Name: libraries_slug_pattern_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_slug_pattern_idx ON public.libraries USING btree (slug varchar_pattern_ops);

--
-- Name: libraries_status_country_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_status_country_idx ON public.libraries USING btree (status, country);

--
-- Name: libraries_status_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_status_created_idx ON public.libraries USING btree (status, created_at DESC, id DESC);

--
-- Name: libraries_submission_origin_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_submission_origin_idx ON public.libraries USING btree (submission_origin);

--
-- Name: libraries_thumbnail_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX libraries_thumbnail_key_idx ON public.libraries USING btree (thumbnail_key) WHERE (thumbnail_key IS NOT NULL);

--
-- Name: library_city_counts_country_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_city_counts_country_idx ON public.library_city_counts USING btree (country, city) INCLUDE (approved, with_photo);

--
-- Name: library_city_counts_grams_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_city_counts_grams_idx ON public.library_city_counts USING gin (public.bookcase_short_grams(country, lower((city)::text)));

--
-- Name: library_city_counts_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_city_counts_trgm_idx ON public.library_city_counts USING gin (lower((city)::text) public.gin_trgm_ops);

--
-- Name: library_counts_day_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_counts_day_idx ON public.library_counts USING btree (day) INCLUDE (approved, with_photo);

--
-- Name: library_map_cells_row_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_map_cells_row_idx ON public.library_map_cells USING btree (level, cy, cx) INCLUDE (country, has_photo, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id);

--
-- Name: library_photos_created_by_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_photos_created_by_idx ON public.library_photos USING btree (created_by, created_at DESC);

--
-- Name: library_photos_library_status_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_photos_library_status_idx ON public.library_photos USING btree (library_id, status, created_at DESC);

--
-- Name: library_photos_photo_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_photos_photo_key_idx ON public.library_photos USING btree (photo_key);

--
-- Name: library_photos_status_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_photos_status_created_idx ON public.library_photos USING btree (status, created_at DESC);

--
-- Name: library_photos_thumbnail_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_photos_thumbnail_key_idx ON public.library_photos USING btree (thumbnail_key);

--
-- Name: library_place_pairs_postal_code_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_place_pairs_postal_code_idx ON public.library_place_pairs USING btree (postal_code, country) INCLUDE (city, approved, with_photo);

--
-- Name: library_postal_code_counts_country_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_postal_code_counts_country_idx ON public.library_postal_code_counts USING btree (country, postal_code) INCLUDE (approved, with_photo);

--
-- Name: library_postal_code_counts_grams_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_postal_code_counts_grams_idx ON public.library_postal_code_counts USING gin (public.bookcase_short_grams(country, (postal_code)::text));

--
-- Name: library_postal_code_counts_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_postal_code_counts_trgm_idx ON public.library_postal_code_counts USING gin (postal_code public.gin_trgm_ops);

--
-- Name: library_search_pairs_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_search_pairs_trgm_idx ON public.library_search_tokens USING gin (token public.gin_trgm_ops) WHERE (strpos(token, ' '::text) > 0);

--
-- Name: library_search_tokens_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_search_tokens_trgm_idx ON public.library_search_tokens USING gin (token public.gin_trgm_ops) WHERE (strpos(token, ' '::text) = 0);

--
-- Name: library_search_triples_trgm_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX library_search_triples_trgm_idx ON public.library_search_triples USING gin (token public.gin_trgm_ops);

--
-- Name: map_contribution_events_actor_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX map_contribution_events_actor_idx ON public.map_contribution_events USING btree (lower((actor_username)::text), id);

--
-- Name: map_contribution_events_contribution_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX map_contribution_events_contribution_idx ON public.map_contribution_events USING btree (contribution_id, id);

--
-- Name: map_contribution_events_library_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX map_contribution_events_library_idx ON public.map_contribution_events USING btree (library_id, id);

--
-- Name: map_contributions_element_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX map_contributions_element_key ON public.map_contributions USING btree (mapdb_element_type, mapdb_element_id) WHERE (mapdb_element_id IS NOT NULL);

--
-- Name: map_contributions_status_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX map_contributions_status_idx ON public.map_contributions USING btree (status);

--
-- Name: moderation_audit_events_actor_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX moderation_audit_events_actor_idx ON public.moderation_audit_events USING btree (lower((actor_username)::text), id);

--
-- Name: moderation_audit_events_kind_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX moderation_audit_events_kind_idx ON public.moderation_audit_events USING btree (kind, id);

--
-- Name: moderation_audit_events_library_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX moderation_audit_events_library_idx ON public.moderation_audit_events USING btree (library_id, id);

--
-- Name: notification_jobs_collapse_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX notification_jobs_collapse_key ON public.notification_jobs USING btree (collapse_key) WHERE (((status)::text = 'queued'::text) AND (collapse_key IS NOT NULL));

--
-- Name: notification_jobs_device_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_jobs_device_idx ON public.notification_jobs USING btree (device_token_id);

--
-- Name: notification_jobs_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_jobs_due_idx ON public.notification_jobs USING btree (run_after, id) WHERE ((status)::text = 'queued'::text);

--
-- Name: notification_jobs_finished_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_jobs_finished_idx ON public.notification_jobs USING btree (finished_at) WHERE (finished_at IS NOT NULL);

--
-- Name: notification_jobs_lease_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_jobs_lease_idx ON public.notification_jobs USING btree (locked_until) WHERE ((status)::text = 'running'::text);

--
-- Name: notification_jobs_user_kind_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_jobs_user_kind_idx ON public.notification_jobs USING btree (user_id, kind, claimed_at);

--
-- Name: password_reset_tokens_job_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX password_reset_tokens_job_idx ON public.password_reset_tokens USING btree (job_id);

--
-- Name: password_reset_tokens_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX password_reset_tokens_user_idx ON public.password_reset_tokens USING btree (user_id);

--
-- Name: refresh_sessions_user_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX refresh_sessions_user_id_idx ON public.refresh_sessions USING btree (user_id);

--
-- Name: reports_created_by_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reports_created_by_idx ON public.reports USING btree (created_by, created_at DESC);

--
-- Name: reports_library_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reports_library_idx ON public.reports USING btree (library_id);

--
-- Name: reports_photo_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reports_photo_key_idx ON public.reports USING btree (photo_key) WHERE (photo_key IS NOT NULL);

--
-- Name: reports_status_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reports_status_created_idx ON public.reports USING btree (status, created_at DESC);

--
-- Name: reports_thumbnail_key_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reports_thumbnail_key_idx ON public.reports USING btree (thumbnail_key) WHERE (thumbnail_key IS NOT NULL);

--
-- Name: social_identities_user_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX social_identities_user_id_idx ON public.social_identities USING btree (user_id);

--
-- Name: used_identity_tokens_expires_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX used_identity_tokens_expires_at_idx ON public.used_identity_tokens USING btree (expires_at);

--
-- Name: users_active_staff_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX users_active_staff_idx ON public.users USING btree (id) WHERE (is_staff AND is_active);

--
-- Name: users_email_lower_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX users_email_lower_key ON public.users USING btree (lower((email)::text)) WHERE ((email)::text <> ''::text);

--
-- Name: users_username_lower_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX users_username_lower_key ON public.users USING btree (lower((username)::text));

--
-- Name: favourites favourites_library_approved; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER favourites_library_approved BEFORE INSERT OR UPDATE OF library_id ON public.favourites FOR EACH ROW EXECUTE FUNCTION public.bookcase_favourite_library_approved();

--
-- Name: libraries libraries_country_bitmaps_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_country_bitmaps_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_country_bitmaps_sync();

--
-- Name: libraries libraries_country_bitmaps_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_country_bitmaps_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_country_bitmaps_sync();

--
-- Name: libraries libraries_country_bitmaps_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_country_bitmaps_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_country_bitmaps_sync();

--
-- Name: libraries libraries_counts_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_counts_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_counts_sync();

--
-- Name: libraries libraries_counts_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_counts_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_counts_sync();

--
-- Name: libraries libraries_counts_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_counts_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_counts_sync();

--
-- Name: libraries libraries_map_cells_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_map_cells_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_map_cells_sync();

--
-- Name: libraries libraries_map_cells_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_map_cells_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_map_cells_sync();

--
-- Name: libraries libraries_map_cells_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_map_cells_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_map_cells_sync();

--
-- Name: libraries libraries_place_counts_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_place_counts_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_place_counts_sync();

--
-- Name: libraries libraries_place_counts_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_place_counts_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_place_counts_sync();

--
-- Name: libraries libraries_place_counts_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_place_counts_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_place_counts_sync();

--
-- Name: libraries libraries_place_pairs_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_place_pairs_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_place_pairs_sync();

--
-- Name: libraries libraries_place_pairs_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_place_pairs_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_place_pairs_sync();

--
-- Name: libraries libraries_place_pairs_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_place_pairs_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_library_place_pairs_sync();

--
-- Name: libraries libraries_search_bitmaps_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_bitmaps_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bitmaps_sync();

--
-- Name: libraries libraries_search_bitmaps_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_bitmaps_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bitmaps_sync();

--
-- Name: libraries libraries_search_bitmaps_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_bitmaps_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bitmaps_sync();

--
-- Name: libraries libraries_search_prefixes_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_prefixes_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_prefixes_sync();

--
-- Name: libraries libraries_search_prefixes_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_prefixes_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_prefixes_sync();

--
-- Name: libraries libraries_search_prefixes_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_prefixes_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_prefixes_update();

--
-- Name: libraries libraries_search_tokens_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_tokens_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_tokens_sync();

--
-- Name: libraries libraries_search_tokens_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_tokens_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_tokens_sync();

--
-- Name: libraries libraries_search_tokens_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_search_tokens_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_tokens_sync();

--
-- Name: libraries libraries_status_favourites; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER libraries_status_favourites AFTER UPDATE OF status ON public.libraries FOR EACH ROW WHEN ((((old.status)::text = 'approved'::text) IS DISTINCT FROM ((new.status)::text = 'approved'::text))) EXECUTE FUNCTION public.bookcase_library_status_favourites();

--
-- Name: library_photos library_photos_map_cells_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_photos_map_cells_delete AFTER DELETE ON public.library_photos REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_map_cells_photos_sync();

--
-- Name: library_photos library_photos_map_cells_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_photos_map_cells_insert AFTER INSERT ON public.library_photos REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_map_cells_photos_sync();

--
-- Name: library_photos library_photos_map_cells_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_photos_map_cells_update AFTER UPDATE ON public.library_photos REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_map_cells_photos_sync();

--
-- Name: libraries library_search_grams_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_search_grams_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bits_sync('library_search_grams', 'bookcase_search_grams');

--
-- Name: libraries library_search_grams_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_search_grams_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bits_sync('library_search_grams', 'bookcase_search_grams');

--
-- Name: libraries library_search_grams_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_search_grams_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bits_sync('library_search_grams', 'bookcase_search_grams');

--
-- Name: libraries library_search_triples_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_search_triples_delete AFTER DELETE ON public.libraries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bits_sync('library_search_triples', 'bookcase_search_triples');

--
-- Name: libraries library_search_triples_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_search_triples_insert AFTER INSERT ON public.libraries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bits_sync('library_search_triples', 'bookcase_search_triples');

--
-- Name: libraries library_search_triples_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER library_search_triples_update AFTER UPDATE ON public.libraries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.bookcase_search_bits_sync('library_search_triples', 'bookcase_search_triples');

--
-- Name: map_contribution_events map_contribution_events_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER map_contribution_events_append_only BEFORE DELETE OR UPDATE ON public.map_contribution_events FOR EACH ROW EXECUTE FUNCTION public.map_contribution_events_append_only();

--
-- Name: map_contribution_events map_contribution_events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER map_contribution_events_no_truncate BEFORE TRUNCATE ON public.map_contribution_events FOR EACH STATEMENT EXECUTE FUNCTION public.map_contribution_events_append_only();

--
-- Name: moderation_audit_events moderation_audit_events_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER moderation_audit_events_append_only BEFORE DELETE OR UPDATE ON public.moderation_audit_events FOR EACH ROW EXECUTE FUNCTION public.moderation_audit_events_append_only();

--
-- Name: moderation_audit_events moderation_audit_events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER moderation_audit_events_no_truncate BEFORE TRUNCATE ON public.moderation_audit_events FOR EACH STATEMENT EXECUTE FUNCTION public.moderation_audit_events_append_only();

--
-- Name: console_sessions console_sessions_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.refresh_sessions(id) ON DELETE CASCADE;

--
-- Name: contributor_agreements contributor_agreements_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contributor_agreements
    ADD CONSTRAINT contributor_agreements_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: device_tokens device_tokens_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens
    ADD CONSTRAINT device_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.refresh_sessions(id) ON DELETE SET NULL;

--
-- Name: device_tokens device_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens
    ADD CONSTRAINT device_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: enrichment_jobs enrichment_jobs_library_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.enrichment_jobs
    ADD CONSTRAINT enrichment_jobs_library_id_fkey FOREIGN KEY (library_id) REFERENCES public.libraries(id) ON DELETE CASCADE;

--
-- Name: favourites favourites_library_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.favourites
    ADD CONSTRAINT favourites_library_id_fkey FOREIGN KEY (library_id) REFERENCES public.libraries(id) ON DELETE CASCADE;

--
-- Name: favourites favourites_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.favourites
    ADD CONSTRAINT favourites_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: idempotency_keys idempotency_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: libraries libraries_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.libraries
    ADD CONSTRAINT libraries_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: library_photos library_photos_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_photos
    ADD CONSTRAINT library_photos_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: library_photos library_photos_library_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.library_photos
    ADD CONSTRAINT library_photos_library_id_fkey FOREIGN KEY (library_id) REFERENCES public.libraries(id) ON DELETE CASCADE;

--
-- Name: map_contribution_events map_contribution_events_contribution_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contribution_events
    ADD CONSTRAINT map_contribution_events_contribution_id_fkey FOREIGN KEY (contribution_id) REFERENCES public.map_contributions(id);

--
-- Name: map_contributions map_contributions_contributed_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contributions
    ADD CONSTRAINT map_contributions_contributed_by_fkey FOREIGN KEY (contributed_by) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: map_contributions map_contributions_library_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.map_contributions
    ADD CONSTRAINT map_contributions_library_id_fkey FOREIGN KEY (library_id) REFERENCES public.libraries(id) ON DELETE CASCADE;

--
-- Name: notification_jobs notification_jobs_device_token_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_jobs
    ADD CONSTRAINT notification_jobs_device_token_id_fkey FOREIGN KEY (device_token_id) REFERENCES public.device_tokens(id) ON DELETE CASCADE;

--
-- Name: notification_jobs notification_jobs_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_jobs
    ADD CONSTRAINT notification_jobs_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: password_reset_tokens password_reset_tokens_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_reset_tokens
    ADD CONSTRAINT password_reset_tokens_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.notification_jobs(id) ON DELETE SET NULL;

--
-- Name: password_reset_tokens password_reset_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.password_reset_tokens
    ADD CONSTRAINT password_reset_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: refresh_sessions refresh_sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refresh_sessions
    ADD CONSTRAINT refresh_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: reports reports_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: reports reports_library_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_library_id_fkey FOREIGN KEY (library_id) REFERENCES public.libraries(id) ON DELETE CASCADE;

--
-- Name: social_identities social_identities_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.social_identities
    ADD CONSTRAINT social_identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- PostgreSQL database dump complete
--
