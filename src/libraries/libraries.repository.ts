import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { Clock } from '../common/clock.js';
import type { LibraryStatus, PendingPhoto, SubmissionOrigin } from './library.entity.js';
import type { CommunityPhotoRow, LibraryRow, LibraryValues } from './library.row.js';
import { ListCache } from './list-cache.js';
import { nearBox } from './near-box.js';
import { slugCandidate } from './slug.js';

/** Everything a public list can filter and order by (validated by the query DTO). */
export interface LibrarySearch {
  q?: string;
  search?: string;
  city?: string;
  country?: string;
  postalCode?: string;
  hasPhoto?: boolean;
  near?: { lat: number; lng: number; radiusMeters?: number };
}

export interface NewLibrary extends LibraryValues {
  slugBase: string;
  status: LibraryStatus;
  origin: SubmissionOrigin;
  createdBy: number | null;
  source: string;
  externalId: string;
  mapdbSubmissionAllowed: boolean;
  mapdbSubmissionAllowedAt: Date | null;
  photoKey: string | null;
  thumbnailKey: string | null;
}

/** Builds a WHERE clause with positional parameters. */
export class Sql {
  readonly where: string[] = [];

  /** Statements made of several WHERE clauses (a count and a page) share one parameter list. */
  constructor(readonly params: unknown[] = []) {}

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  and(condition: string): void {
    this.where.push(condition);
  }

  whereClause(): string {
    return this.where.length ? `WHERE ${this.where.join(' AND ')}` : '';
  }
}

/** Escapes LIKE wildcards so user text matches literally (backslash is PostgreSQL's default escape). */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** The words of free text for `q`: letters and digits only, lower-cased, at most 16 distinct; null without any. */
export function searchWords(text: string): string | null {
  const tokens = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const unique = [...new Set(tokens)].slice(0, 16);
  return unique.length ? unique.join(' ') : null;
}

/**
 * SQL for the prefix tsquery (`'w1':* & 'w2':*`) of the words in `param`. The words are accent-folded and parsed by
 * the same parser as the documents, and every lexeme is quoted: folding can turn letters into tsquery syntax
 * (ʼ → ', ŉ → 'n, ː → :), which must never reach to_tsquery unquoted. NULL (matching nothing) when no lexeme is left.
 */
export function prefixTsQuerySql(param: string): string {
  const lexemes = `nullif(array_to_string(tsvector_to_array(to_tsvector('simple', bookcase_unaccent(${param}))), E'\\x01'), '')`;
  const escaped = `replace(replace(${lexemes}, '\\', '\\\\'), '''', '''''')`;
  return `to_tsquery('simple', '''' || replace(${escaped}, E'\\x01', ''':* & ''') || ''':*')`;
}

export const LIBRARY_COLUMNS = `
  l.id, l.slug, l.name, l.description, l.photo_key, l.thumbnail_key,
  ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lng,
  l.address, l.city, l.country, l.postal_code, l.wheelchair_accessible, l.capacity, l.is_indoor, l.is_lit,
  l.website, l.contact, l.source, l.external_id, l.operator, l.brand, l.created_at, l.status, l.rejection_reason,
  l.mapdb_submission_allowed, l.submission_origin, l.created_by, l.pending_changes, l.pending_photo,
  l.ai_generated_fields`;

/** The expression libraries_approved_point_idx indexes (longitude, latitude; the index also holds `location`). */
export const APPROVED_POINT = 'point(ST_X(l.location::geometry), ST_Y(l.location::geometry))';

export const HAS_PHOTO = `(l.photo_key IS NOT NULL OR EXISTS (
  SELECT 1 FROM library_photos p WHERE p.library_id = l.id AND p.status = 'approved'))`;

/**
 * From this many matching rows on, a list's count (and, for `q`/`search`, its ranked page) is memoised for
 * LIST_CACHE_TTL_MS. Counting costs about 0.5–1 µs and ranking about 3 µs per matching row, so below this both stay
 * exact on every request at a few milliseconds at most. Proximity results are never memoised: their keys hold
 * coordinates, which hardly ever repeat.
 */
export const LARGE_RESULT_ROWS = 1000;
export const LIST_CACHE_TTL_MS = 30_000;

@Injectable()
export class LibrariesRepository {
  private readonly cache: ListCache;
  /** A random id per pooled connection (see read). */
  private readonly connectionIds = new WeakMap<pg.PoolClient, string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    clock: Clock,
  ) {
    this.cache = new ListCache(clock, { ttlMs: LIST_CACHE_TTL_MS, maxEntries: 1000 });
  }

  private favouritedColumn(sql: Sql, userId: number | null): string {
    if (userId === null) return 'false AS is_favourited';
    return `EXISTS (SELECT 1 FROM favourites f WHERE f.user_id = ${sql.param(userId)} AND f.library_id = l.id) AS is_favourited`;
  }

  /**
   * WHERE (and, for a page, ORDER BY) of a public list. Parameters are created only for the clauses that use them:
   * PostgreSQL refuses a statement with a parameter it never sees (the count has no ORDER BY).
   */
  private searchConditions(
    sql: Sql,
    search: LibrarySearch,
    use: 'page' | 'count',
  ): { order: string; rank?: string } {
    const ordered = use === 'page';
    let rank: string | undefined;
    sql.and(`l.status = 'approved'`);
    let order = 'l.created_at DESC, l.id DESC';
    if (search.country) sql.and(`l.country = ${sql.param(search.country.toUpperCase())}`);
    if (search.city)
      sql.and(`lower(l.city) LIKE '%' || lower(${sql.param(likeEscape(search.city))}) || '%'`);
    if (search.postalCode)
      sql.and(`l.postal_code LIKE '%' || ${sql.param(likeEscape(search.postalCode))} || '%'`);
    if (search.hasPhoto === true) sql.and(HAS_PHOTO);
    if (search.hasPhoto === false) sql.and(`NOT ${HAS_PHOTO}`);
    if (search.search) {
      // Escaped after folding, which can itself produce a LIKE metacharacter (∖ → \).
      const folded = `lower(bookcase_unaccent(${sql.param(search.search)}))`;
      const pattern = `'%' || replace(replace(replace(${folded}, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`;
      sql.and(`l.search_text LIKE ${pattern}`);
      rank = `(lower(bookcase_unaccent(l.name)) LIKE ${pattern})`;
      order = `${rank} DESC, ${order}`;
    } else if (search.q) {
      const words = searchWords(search.q);
      if (words) {
        const tsquery = prefixTsQuerySql(sql.param(words));
        sql.and(`l.search_vector @@ ${tsquery}`);
        rank = `ts_rank(l.search_vector, ${tsquery})`;
        order = `${rank} DESC, ${order}`;
      }
    }
    if (search.near && (ordered || search.near.radiusMeters !== undefined)) {
      const point = `ST_SetSRID(ST_MakePoint(${sql.param(search.near.lng)}, ${sql.param(search.near.lat)}), 4326)::geography`;
      const { lat, lng, radiusMeters } = search.near;
      const box = radiusMeters === undefined || ordered ? null : nearBox(lat, lng, radiusMeters);
      if (box) {
        // The count: the same circle, read from libraries_approved_point_idx alone (an index-only scan, no heap
        // fetch per candidate). The box holds the whole circle (see nearBox) and only narrows the candidates;
        // _ST_DWithin is ST_DWithin's exact test without its pull towards libraries_location_idx, whose
        // candidates each cost a heap fetch. Same rows as the page's condition, at a third of the cost.
        const corner = (x: number, y: number) => `point(${sql.param(x)}, ${sql.param(y)})`;
        sql.and(
          `${APPROVED_POINT} <@ box(${corner(box.minLng, box.minLat)}, ${corner(box.maxLng, box.maxLat)})`,
        );
        sql.and(`_ST_DWithin(l.location, ${point}, ${sql.param(radiusMeters)}, true)`);
      } else if (radiusMeters !== undefined) {
        sql.and(`ST_DWithin(l.location, ${point}, ${sql.param(radiusMeters)})`);
      }
      // The distance alone: with a tie-breaker after it PostgreSQL 15 cannot take the order from the GiST index
      // (a KNN scan) and would compute and sort the distance of every approved row instead.
      order = `l.location <-> ${point}`;
      rank = undefined;
    }
    return { order, rank };
  }

  /**
   * Adds the conditions of a public list without proximity (approved, q, search, city, country, postal_code,
   * has_photo) to `sql`: other readers of approved libraries (the map) filter exactly as the list does.
   */
  addApprovedFilters(sql: Sql, search: Omit<LibrarySearch, 'near'>): void {
    this.searchConditions(sql, search, 'count');
  }

  /** The count statement of a public list (also what query-plan tests EXPLAIN). */
  countApprovedQuery(search: LibrarySearch): { text: string; params: unknown[] } {
    const sql = new Sql();
    this.searchConditions(sql, search, 'count');
    return {
      text: `SELECT count(*)::int AS n FROM libraries l ${sql.whereClause()}`,
      params: sql.params,
    };
  }

  /** The page statement of a public list (also what query-plan tests EXPLAIN). */
  findApprovedQuery(
    search: LibrarySearch,
    userId: number | null,
    limit: number,
    offset: number,
  ): { text: string; params: unknown[] } {
    return this.pageQuery(search, limit, offset, (sql) =>
      [LIBRARY_COLUMNS, this.favouritedColumn(sql, userId)].join(', '),
    );
  }

  /** Only the ids of a page, in order: what the memo of a large text search keeps. */
  findApprovedIdsQuery(
    search: LibrarySearch,
    limit: number,
    offset: number,
  ): { text: string; params: unknown[] } {
    return this.pageQuery(search, limit, offset, () => 'l.id');
  }

  private pageQuery(
    search: LibrarySearch,
    limit: number,
    offset: number,
    columns: (sql: Sql) => string,
  ): { text: string; params: unknown[] } {
    const sql = new Sql();
    const { order } = this.searchConditions(sql, search, 'page');
    const selected = columns(sql);
    return {
      text: `SELECT ${selected} FROM libraries l ${sql.whereClause()}
       ORDER BY ${order} LIMIT ${sql.param(limit)} OFFSET ${sql.param(offset)}`,
      params: sql.params,
    };
  }

  /**
   * The count and one page of a public list in a single statement: `total` on every row, and a single row of NULL
   * columns when the page is empty (past the end, or nothing matches).
   */
  countAndFindApprovedQuery(
    search: LibrarySearch,
    userId: number | null,
    limit: number,
    offset: number,
  ): { text: string; params: unknown[] } {
    const sql = new Sql();
    const { order, rank } = this.searchConditions(sql, search, 'page');
    const columns = [LIBRARY_COLUMNS, this.favouritedColumn(sql, userId)].join(', ');
    if (rank !== undefined) {
      // A text search: the matches are found and ranked once, and counted and paged from there; only the page's
      // rows are read in full. Finding them twice (count and page) and computing every column of every match
      // before the sort cost PostgreSQL about twice as much (search=1043: 0.45 instead of 0.8 ms, planning
      // 0.25 instead of 0.4 ms).
      const matchOrder = 'm.rank DESC, m.created_at DESC, m.id DESC';
      return {
        text: `WITH m AS MATERIALIZED (
           SELECT l.id, l.created_at, ${rank} AS rank FROM libraries l ${sql.whereClause()})
         SELECT t.total, p.* FROM (SELECT count(*)::int AS total FROM m) t
         LEFT JOIN (SELECT ${columns}
           FROM (SELECT * FROM m ORDER BY ${matchOrder} LIMIT ${sql.param(limit)} OFFSET ${sql.param(offset)}) m
           JOIN libraries l ON l.id = m.id ORDER BY ${matchOrder}) p ON true`,
        params: sql.params,
      };
    }
    const counting = new Sql(sql.params);
    this.searchConditions(counting, search, 'count');
    return {
      text: `SELECT t.total, p.* FROM (SELECT count(*)::int AS total FROM libraries l ${counting.whereClause()}) t
       LEFT JOIN (SELECT ${columns} FROM libraries l ${sql.whereClause()}
         ORDER BY ${order} LIMIT ${sql.param(limit)} OFFSET ${sql.param(offset)}) p ON true`,
      params: sql.params,
    };
  }

  private static key(kind: string, statement: { text: string; params: unknown[] }): string {
    return `${kind}\u0000${statement.text}\u0000${JSON.stringify(statement.params)}`;
  }

  /**
   * The count of a public list and, when the count had to be computed, the page at `offset` read by the same
   * statement: one round trip to PostgreSQL instead of two (proximity lists, whose counts are never memoised, and
   * small results). `rows` is undefined when the count came from the memo or from a concurrent request's query;
   * the caller then reads the page with findApproved, as it also must when `offset` turns out to be past the end.
   */
  async countAndFindApproved(
    search: LibrarySearch,
    userId: number | null,
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: LibraryRow[] | undefined }> {
    let rows: LibraryRow[] | undefined;
    const total = await this.cache.get(
      LibrariesRepository.key('count', this.countApprovedQuery(search)),
      async () => {
        const { text, params } = this.countAndFindApprovedQuery(search, userId, limit, offset);
        const result = await this.read<LibraryRow & { total: number }>(
          text,
          params,
          LibrariesRepository.worthPreparing(search),
        );
        // Every row keeps its `total`, which nothing reads: removing it with a rest spread (V8 copies each
        // 34-column row into a new object) cost about 25 µs per page of 20 rows.
        rows = result.filter((row) => row.id !== null);
        return result[0].total;
      },
      (n) => n >= LARGE_RESULT_ROWS && !search.near,
    );
    return { total, rows };
  }

  /**
   * A page of a public list. A `q` or `search` page of a large result (its count is memoised) is ranked once per
   * LIST_CACHE_TTL_MS: ranking a common word ranks all of its matches. The rows themselves are always read fresh,
   * so edits show at once and a library that is no longer approved drops out.
   */
  async findApproved(
    search: LibrarySearch,
    userId: number | null,
    limit: number,
    offset: number,
  ): Promise<LibraryRow[]> {
    const ranked = !search.near && Boolean(search.search || (search.q && searchWords(search.q)));
    if (
      ranked &&
      this.cache.has(LibrariesRepository.key('count', this.countApprovedQuery(search)))
    ) {
      const statement = this.findApprovedIdsQuery(search, limit, offset);
      const ids = await this.cache.get(
        LibrariesRepository.key('page', statement),
        async () =>
          (await this.dataSource.query<{ id: number }[]>(statement.text, statement.params)).map(
            (row) => row.id,
          ),
        () => true,
      );
      return this.findApprovedByIds(ids, userId);
    }
    const { text, params } = this.findApprovedQuery(search, userId, limit, offset);
    return this.read<LibraryRow>(text, params, LibrariesRepository.worthPreparing(search));
  }

  /**
   * Whether a list's statement is prepared (see read): a proximity list, whose PostGIS conditions cost PostgreSQL
   * about 0.3 ms to plan per request (measured at 100k libraries), and whose plan is the same whatever the point and
   * radius; but not when it also matches text, whose selectivity decides between an index and a scan. Planning a
   * plain list costs about 0.05 ms, less than preparing saves (measured: Node spent more than PostgreSQL saved).
   */
  private static worthPreparing(search: LibrarySearch): boolean {
    return (
      search.near !== undefined && !search.q && !search.search && !search.city && !search.postalCode
    );
  }

  /**
   * Runs a read. A `prepared` statement is parsed once per pooled connection and then only executed, named after its
   * text (identical statements share a name; a list has a few dozen shapes). PostgreSQL plans it with the actual
   * values for the first executions and keeps a generic plan only when that is estimated to cost no more. Public for
   * the other readers of approved libraries (the map), whose statements are as costly to plan.
   */
  async read<T>(text: string, params: unknown[], prepared: boolean): Promise<T[]> {
    if (!prepared) return this.dataSource.query<T[]>(text, params);
    const pool = (this.dataSource.driver as PostgresDriver).master as pg.Pool;
    const client = await pool.connect();
    let id = this.connectionIds.get(client);
    if (id === undefined) this.connectionIds.set(client, (id = randomBytes(6).toString('hex')));
    // The name holds a random id of the connection too: the embedded database serves every connection (of this
    // process and of others) from one session, where two connections preparing one name would collide.
    const name = `lib_${id}_${createHash('sha1').update(text).digest('base64url')}`;
    try {
      const result = await client.query<T & pg.QueryResultRow>({ name, text, values: params });
      client.release();
      return result.rows;
    } catch (error) {
      // A failed connection is closed rather than handed to the next request (with its prepared statements).
      client.release(error as Error);
      throw error;
    }
  }

  /** Approved libraries by id, in the order of `ids`. */
  private async findApprovedByIds(ids: number[], userId: number | null): Promise<LibraryRow[]> {
    if (!ids.length) return [];
    const sql = new Sql();
    const favourited = this.favouritedColumn(sql, userId);
    const rows = await this.dataSource.query<LibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS}, ${favourited} FROM libraries l
       WHERE l.id = ANY(${sql.param(ids)}::int[]) AND l.status = 'approved'`,
      sql.params,
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  findLatest(
    limit: number,
    hasPhoto: boolean | undefined,
    userId: number | null,
  ): Promise<LibraryRow[]> {
    return this.findApproved({ hasPhoto }, userId, limit, 0);
  }

  async findBySlug(
    slug: string,
    userId: number | null,
    manager?: EntityManager,
    lock = false,
  ): Promise<LibraryRow | null> {
    const sql = new Sql();
    const favourited = this.favouritedColumn(sql, userId);
    const rows = await (manager ?? this.dataSource).query<LibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS}, ${favourited} FROM libraries l WHERE l.slug = ${sql.param(slug)} ${lock ? 'FOR UPDATE OF l' : ''}`,
      sql.params,
    );
    return rows[0] ?? null;
  }

  async findById(
    id: number,
    userId: number | null,
    manager?: EntityManager,
  ): Promise<LibraryRow | null> {
    const sql = new Sql();
    const favourited = this.favouritedColumn(sql, userId);
    const rows = await (manager ?? this.dataSource).query<LibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS}, ${favourited} FROM libraries l WHERE l.id = ${sql.param(id)}`,
      sql.params,
    );
    return rows[0] ?? null;
  }

  findApprovedPhotos(libraryId: number): Promise<CommunityPhotoRow[]> {
    return this.dataSource.query<CommunityPhotoRow[]>(
      `SELECT id, caption, photo_key, thumbnail_key, created_at FROM library_photos
       WHERE library_id = $1 AND status = 'approved' ORDER BY created_at DESC, id DESC`,
      [libraryId],
    );
  }

  /** Per-country counts; memoised like a list's count once they add up to LARGE_RESULT_ROWS. */
  countApprovedByCountry(): Promise<{ country: string; count: number }[]> {
    return this.cache.get(
      'countries',
      () =>
        this.dataSource.query<{ country: string; count: number }[]>(
          `SELECT country, count(*)::int AS count FROM libraries WHERE status = 'approved'
           GROUP BY country ORDER BY count DESC, country ASC`,
        ),
      (rows) => rows.reduce((sum, row) => sum + row.count, 0) >= LARGE_RESULT_ROWS,
    );
  }

  async countByCreator(userId: number): Promise<number> {
    const rows = await this.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM libraries WHERE created_by = $1',
      [userId],
    );
    return rows[0].n;
  }

  /** The caller's submissions: pending first, then newest. */
  findByCreator(userId: number, limit: number, offset: number): Promise<LibraryRow[]> {
    return this.dataSource.query<LibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS},
         EXISTS (SELECT 1 FROM favourites f WHERE f.user_id = $1 AND f.library_id = l.id) AS is_favourited
       FROM libraries l WHERE l.created_by = $1
       ORDER BY (l.status = 'pending') DESC, l.created_at DESC, l.id DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    );
  }

  /**
   * Inserts with the first free slug of `slugBase`, `slugBase-2`, …; concurrent creates never collide because a
   * taken slug makes the insert a no-op (ON CONFLICT DO NOTHING) and the next candidate is tried.
   */
  async insert(manager: EntityManager, library: NewLibrary): Promise<number> {
    // Slug bases are [a-z0-9-] only; the pattern index (varchar_pattern_ops) serves the prefix lookup.
    const taken = await manager.query<{ slug: string }[]>(
      'SELECT slug FROM libraries WHERE slug = $1 OR slug LIKE $2',
      [library.slugBase, `${likeEscape(library.slugBase)}-%`],
    );
    const used = new Set(taken.map((row) => row.slug));
    let attempt = 1;
    for (let tries = 0; tries < 50; tries += 1) {
      while (used.has(slugCandidate(library.slugBase, attempt))) attempt += 1;
      const slug = slugCandidate(library.slugBase, attempt);
      const rows = await manager.query<{ id: number }[]>(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, wheelchair_accessible,
           capacity, is_indoor, is_lit, website, contact, operator, brand, source, external_id, photo_key, thumbnail_key,
           location, status, submission_origin, created_by, mapdb_submission_allowed, mapdb_submission_allowed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
           ST_SetSRID(ST_MakePoint($20, $21), 4326)::geography, $22, $23, $24, $25, $26)
         ON CONFLICT (slug) DO NOTHING RETURNING id`,
        [
          slug,
          library.name,
          library.description,
          library.address,
          library.city,
          library.country,
          library.postal_code,
          library.wheelchair_accessible,
          library.capacity,
          library.is_indoor,
          library.is_lit,
          library.website,
          library.contact,
          library.operator,
          library.brand,
          library.source,
          library.externalId,
          library.photoKey,
          library.thumbnailKey,
          library.longitude,
          library.latitude,
          library.status,
          library.origin,
          library.createdBy,
          library.mapdbSubmissionAllowed,
          library.mapdbSubmissionAllowedAt,
        ],
      );
      if (rows.length) return rows[0].id;
      used.add(slug);
    }
    throw new Error(`no free slug for ${library.slugBase}`);
  }

  /** Applies edited columns in place (pending libraries). Keys are LibraryValues names. */
  async updateValues(
    manager: EntityManager,
    id: number,
    values: Partial<LibraryValues>,
    photo: PendingPhoto | null,
    aiGeneratedFields: string[],
  ): Promise<void> {
    const sql = new Sql();
    const sets: string[] = [];
    for (const [key, value] of Object.entries(values)) {
      if (key === 'latitude' || key === 'longitude') continue;
      sets.push(`${key} = ${sql.param(value)}`);
    }
    if (values.latitude !== undefined && values.longitude !== undefined) {
      sets.push(
        `location = ST_SetSRID(ST_MakePoint(${sql.param(values.longitude)}, ${sql.param(values.latitude)}), 4326)::geography`,
      );
    }
    if (photo) {
      sets.push(
        `photo_key = ${sql.param(photo.photo_key)}`,
        `thumbnail_key = ${sql.param(photo.thumbnail_key)}`,
      );
    }
    sets.push(`ai_generated_fields = ${sql.param(aiGeneratedFields)}`, 'updated_at = now()');
    await manager.query(
      `UPDATE libraries SET ${sets.join(', ')} WHERE id = ${sql.param(id)}`,
      sql.params,
    );
  }

  async stageChanges(
    manager: EntityManager,
    id: number,
    changes: Record<string, unknown> | null,
    photo: PendingPhoto | null,
  ): Promise<void> {
    await manager.query(
      'UPDATE libraries SET pending_changes = $1, pending_photo = $2, updated_at = now() WHERE id = $3',
      [
        changes === null ? null : JSON.stringify(changes),
        photo === null ? null : JSON.stringify(photo),
        id,
      ],
    );
  }

  /** Whether a stored file is (also) a community photo's, e.g. a primary photo promoted from one. */
  async isCommunityPhotoKey(photoKey: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      'SELECT 1 FROM library_photos WHERE photo_key = $1 LIMIT 1',
      [photoKey],
    );
    return rows.length > 0;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
