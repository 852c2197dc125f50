/**
 * The SQL of the public library list, built as plain data: no Nest, no database, no memo. Every statement the list
 * sends (count, page, count and page together, the ids of a ranked page, rows by id) comes from here, so unit tests
 * pin it (`list-query.spec.ts` and its committed SQL snapshots) and the query-plan tests EXPLAIN exactly what runs.
 */
import { nearBox } from './near-box.js';

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

/** A statement ready for `pg`: text with positional parameters and their values. */
export interface Statement {
  text: string;
  params: unknown[];
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
 * SQL for the prefix tsquery (`'w1':* & 'w2':*`) of the words in `param`; with weight `A`, of those words in the name
 * (`'w1':*A & 'w2':*A`). The words are accent-folded and parsed as plain text by the documents' parser
 * (plainto_tsquery: never as query syntax, which folding can produce: ʼ → ', ŉ → 'n, ː → :); its canonical output
 * quotes every lexeme, and each quoted lexeme gets `:*`. NULL (matching nothing) when no lexeme is left. Every
 * function here is immutable, so PostgreSQL computes the query once, when it plans the statement (with the stable
 * array_to_string it was computed again for every row a filter read: most of a walk's CPU).
 */
export function prefixTsQuerySql(param: string, weight: '' | 'A' = ''): string {
  const plain = `plainto_tsquery('simple', bookcase_unaccent(${param}))::text`;
  return `nullif(regexp_replace(${plain}, '''(?:[^'']|'''')*''', '\\&:*${weight}', 'g'), '')::tsquery`;
}

/** SQL for the lexemes of the words in `param` (text[], sorted and distinct), as prefixTsQuerySql reads them. */
function queryLexemesSql(param: string): string {
  return `tsvector_to_array(to_tsvector('simple', bookcase_unaccent(${param})))`;
}

export const LIBRARY_COLUMNS = `
  l.id, l.slug, l.name, l.description, l.photo_key, l.thumbnail_key,
  ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lng,
  l.address, l.city, l.country, l.postal_code, l.wheelchair_accessible, l.capacity, l.is_indoor, l.is_lit,
  l.website, l.contact, l.source, l.external_id, l.operator, l.brand, l.created_at, l.status, l.rejection_reason,
  l.mapdb_submission_allowed, l.submission_origin, l.created_by, l.pending_changes, l.pending_photo,
  l.ai_generated_fields`;

/**
 * The columns of a public list item (what LibraryMapper.item reads): list and favourites pages select only these.
 * The owner's and staff's columns (two jsonb, an array, provenance) cost Node a quarter of a page's row decoding.
 */
export const LIST_ITEM_COLUMNS = `
  l.id, l.slug, l.name, l.description, l.photo_key, l.thumbnail_key,
  ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lng,
  l.address, l.city, l.country, l.postal_code, l.wheelchair_accessible, l.capacity, l.is_indoor, l.is_lit,
  l.website, l.contact, l.source, l.operator, l.brand, l.created_at`;

/** The expression libraries_approved_point_idx indexes (longitude, latitude; the index also holds `location`). */
export const APPROVED_POINT = 'point(ST_X(l.location::geometry), ST_Y(l.location::geometry))';

export const HAS_PHOTO = `(l.photo_key IS NOT NULL OR EXISTS (
  SELECT 1 FROM library_photos p WHERE p.library_id = l.id AND p.status = 'approved'))`;

/** `is_favourited` of a library row: one primary-key probe of favourites per row for a signed-in reader. */
export function favouritedColumn(sql: Sql, userId: number | null): string {
  if (userId === null) return 'false AS is_favourited';
  return `EXISTS (SELECT 1 FROM favourites f WHERE f.user_id = ${sql.param(userId)} AND f.library_id = l.id) AS is_favourited`;
}

/** Whether a list is ordered by relevance (`q` with at least one word, or `search`) rather than by date or distance. */
export function isRanked(search: LibrarySearch): boolean {
  return !search.near && Boolean(search.search || (search.q && searchWords(search.q)));
}

/**
 * Whether a list's count can be read from `library_country_counts` (the per-country counts of approved libraries and
 * of those with a primary photo, kept exact by triggers with `library_counts`): the default list, `country`, `has_photo`, or both.
 */
export function countsFromAggregate(search: LibrarySearch): boolean {
  // Proximity without a radius orders by distance but filters nothing: its count is the same list's without it.
  return (
    !search.q &&
    !search.search &&
    !search.city &&
    !search.postalCode &&
    (!search.near || search.near.radiusMeters === undefined)
  );
}

/**
 * The exact count of a list that countsFromAggregate accepts, as a scalar expression: sums over
 * `library_country_counts` (one row per country)
 * and, for `has_photo`, the approved libraries without a primary photo that have an approved community photo (found
 * through library_photos' status index: as many rows as such photos, not as libraries).
 */
function aggregateCount(sql: Sql, search: LibrarySearch): string {
  const country = search.country ? sql.param(search.country.toUpperCase()) : null;
  const sum = (column: string) =>
    `(SELECT coalesce(sum(${column}), 0) FROM library_country_counts${country ? ` WHERE country = ${country}` : ''})`;
  if (search.hasPhoto === undefined) return `${sum('approved')}::int`;
  const communityOnly = `(SELECT count(DISTINCT p.library_id) FROM library_photos p
         JOIN libraries l ON l.id = p.library_id
         WHERE p.status = 'approved' AND l.status = 'approved' AND l.photo_key IS NULL${country ? ` AND l.country = ${country}` : ''})`;
  return search.hasPhoto
    ? `(${sum('with_photo')} + ${communityOnly})::int`
    : `(${sum('approved')} - ${sum('with_photo')} - ${communityOnly})::int`;
}

/**
 * Whether a list's statement is prepared: a proximity list, whose PostGIS conditions cost PostgreSQL about 0.3 ms to
 * plan per request (measured at 100k libraries), and whose plan is the same whatever the point and radius; but not
 * when it also matches text, whose selectivity decides between an index and a scan. Planning a plain list costs
 * about 0.05 ms, less than preparing saves (measured: Node spent more than PostgreSQL saved).
 */
export function worthPreparing(search: LibrarySearch): boolean {
  return (
    search.near !== undefined && !search.q && !search.search && !search.city && !search.postalCode
  );
}

/**
 * Adds the WHERE conditions of a public list to `sql` and returns its ORDER BY (and, for a substring search, the rank
 * expression). Parameters are created only for the clauses that use them: PostgreSQL refuses a statement with a
 * parameter it never sees (the count has no ORDER BY).
 */
export function addListConditions(
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
    // Only the condition: a `q` list is ordered by textPageQuery, or by distance.
    const words = searchWords(search.q);
    if (words) sql.and(`l.search_vector @@ ${prefixTsQuerySql(sql.param(words))}`);
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

/** The count statement of a public list (also what query-plan tests EXPLAIN and what keys the count memo). */
export function countQuery(search: LibrarySearch): Statement {
  if (countsFromAggregate(search)) {
    const sql = new Sql();
    return { text: `SELECT ${aggregateCount(sql, search)} AS n`, params: sql.params };
  }
  const sql = new Sql();
  const words = orderedTextWords(search);
  if (words) {
    return {
      text: `SELECT c.total AS n FROM (${textCounts(textConditions(sql, search, words))}) c`,
      params: sql.params,
    };
  }
  addListConditions(sql, search, 'count');
  return {
    text: `SELECT count(*)::int AS n FROM libraries l ${sql.whereClause()}`,
    params: sql.params,
  };
}

function selectPage(
  search: LibrarySearch,
  limit: number,
  offset: number,
  columns: (sql: Sql) => string,
): Statement {
  const words = orderedTextWords(search);
  if (words) return textPageQuery(search, words, limit, offset, columns, false);
  const sql = new Sql();
  const { order } = addListConditions(sql, search, 'page');
  const selected = columns(sql);
  return {
    text: `SELECT ${selected} FROM libraries l ${sql.whereClause()}
       ORDER BY ${order} LIMIT ${sql.param(limit)} OFFSET ${sql.param(offset)}`,
    params: sql.params,
  };
}

/** The page statement of a public list (also what query-plan tests EXPLAIN). */
export function pageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
): Statement {
  return selectPage(search, limit, offset, (sql) =>
    [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', '),
  );
}

/** Only the ids of a page, in order: what the memo of a large text search keeps. */
export function pageIdsQuery(search: LibrarySearch, limit: number, offset: number): Statement {
  return selectPage(search, limit, offset, () => 'l.id');
}

/** Approved libraries by id (in no particular order: the caller restores the order of `ids`). */
export function byIdsQuery(ids: number[], userId: number | null): Statement {
  const sql = new Sql();
  const favourited = favouritedColumn(sql, userId);
  return {
    text: `SELECT ${LIST_ITEM_COLUMNS}, ${favourited} FROM libraries l
       WHERE l.id = ANY(${sql.param(ids)}::int[]) AND l.status = 'approved'`,
    params: sql.params,
  };
}

/**
 * The count and one page of a public list in a single statement: `total` on every row, and a single row of NULL
 * columns when the page is empty (past the end, or nothing matches).
 */
export function countAndPageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
): Statement {
  const listColumns = (sql: Sql) => [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  const words = orderedTextWords(search);
  if (words) return textPageQuery(search, words, limit, offset, listColumns, true);
  const sql = new Sql();
  const { order, rank } = addListConditions(sql, search, 'page');
  const columns = listColumns(sql);
  if (rank !== undefined) {
    // A substring search: the matches are found and ranked once, and counted and paged from there; only the page's
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
  let total: string;
  if (countsFromAggregate(search)) total = `SELECT ${aggregateCount(counting, search)} AS total`;
  else {
    addListConditions(counting, search, 'count');
    total = `SELECT count(*)::int AS total FROM libraries l ${counting.whereClause()}`;
  }
  // The page reads at most the rows the count found past `offset` (LIMIT 0 reads nothing): a walk of
  // libraries_location_idx nearest first otherwise goes on through every row of the index's box that fails the
  // radius once the circle's few matches are found (at 1M, an empty 25 km circle beside a city: 4,277 heap
  // fetches, 450 ms cold).
  const limitParam = sql.param(limit);
  const offsetParam = sql.param(offset);
  return {
    text: `SELECT t.total, p.* FROM (${total}) t
       LEFT JOIN LATERAL (SELECT ${columns} FROM libraries l ${sql.whereClause()}
         ORDER BY ${order} LIMIT least(${limitParam}::int, greatest(t.total - ${offsetParam}::int, 0))
         OFFSET ${offsetParam}) p ON true`,
    params: sql.params,
  };
}

/**
 * Word prefixes `library_search_prefixes` counts (its migration's `bookcase_search_prefixes`): 1 to this many
 * characters of every lexeme. A word longer than this is counted from `libraries`.
 */
export const SEARCH_PREFIX_MAX_CHARS = 24;

/** The name's own vector, exactly as libraries_approved_name_vector_idx indexes it. */
const NAME_VECTOR = `to_tsvector('simple', bookcase_unaccent(l.name::text))`;

/**
 * How much more a page's candidate costs when the matches are collected through a GIN index (a heap row each, about
 * 30 µs cold at 1M) than when libraries_approved_created_search_idx is walked newest first (an index tuple each,
 * 1–2 µs). A part of `size` matches is walked when `RATIO · size² ≥ (offset + limit) · approved`: the walk reads
 * about `(offset + limit) · approved / size` tuples, the collection `size` heap rows. For page 1 of 900,000 approved
 * libraries that is from about 1,060 matches on.
 */
const WALK_COST_RATIO = 16;

/** The words of a `q` list ordered by text (not by distance, and not a `search`); null for other lists. */
function orderedTextWords(search: LibrarySearch): string | null {
  if (search.near || search.search || !search.q) return null;
  return searchWords(search.q);
}

interface TextConditions {
  /** The list's other filters, `WHERE l.status = 'approved' AND …`. */
  where: string;
  /** Whether `q` is the only filter (its counts can then come from library_search_prefixes). */
  textOnly: boolean;
  lexemes: string;
  /** The tsquery of all matches, and of the matches whose name holds every word. */
  all: string;
  name: string;
}

function textConditions(sql: Sql, search: LibrarySearch, words: string): TextConditions {
  const base = new Sql(sql.params);
  addListConditions(base, { ...search, q: undefined }, 'count');
  const param = sql.param(words);
  return {
    where: base.whereClause(),
    textOnly: base.where.length === 1,
    lexemes: queryLexemesSql(param),
    all: prefixTsQuerySql(param),
    name: prefixTsQuerySql(param, 'A'),
  };
}

/**
 * A row of the exact number of matches (`total`) and of name matches (`in_name`). For `q` alone with one lexeme (one
 * word, a prefix query), one row of library_search_prefixes; otherwise counted from `libraries`, both in one scan
 * (linear in the matches). The lexemes are constants when PostgreSQL plans the statement, so the branch not taken
 * becomes a one-time filter that is false and reads nothing.
 */
function textCounts(t: TextConditions): string {
  const single = `cardinality(${t.lexemes}) = 1 AND char_length((${t.lexemes})[1]) <= ${SEARCH_PREFIX_MAX_CHARS}`;
  const counted = `SELECT count(*) AS total, count(*) FILTER (WHERE l.search_vector @@ ${t.name}) AS in_name
           FROM libraries l ${t.where} AND l.search_vector @@ ${t.all}`;
  if (!t.textOnly) return `SELECT total::int, in_name::int FROM (${counted}) c`;
  return `SELECT coalesce(sum(c.total), 0)::int AS total, coalesce(sum(c.in_name), 0)::int AS in_name FROM (
           ${counted} AND NOT (${single})
           UNION ALL
           SELECT s.approved, s.in_name FROM library_search_prefixes s
           WHERE ${single} AND s.prefix = (${t.lexemes})[1]) c`;
}

/**
 * A page of a `q` list: the libraries whose name holds every word first, then the others, newest first within each
 * (decisions: "ranked name above description"). The counts come first (`t`, materialised: computed once); each part
 * then reads at most its first `offset + limit` rows, not at all when it is empty or lies past the page (a one-time
 * filter on `t`), in one of two ways chosen by its exact size: walking libraries_approved_created_search_idx newest
 * first and stopping after the page (many matches: index tuples only), or collecting its matches through a GIN index
 * and sorting them (few matches: a heap row each). Ranking every match with ts_rank read each match's heap row (at
 * 1M, `books`: 4 s cold).
 */
function textPageQuery(
  search: LibrarySearch,
  words: string,
  limit: number,
  offset: number,
  columns: (sql: Sql) => string,
  withTotal: boolean,
): Statement {
  const sql = new Sql();
  const selected = columns(sql);
  const t = textConditions(sql, search, words);
  const lim = `${sql.param(limit)}::int`;
  const off = `${sql.param(offset)}::int`;
  // A constant when PostgreSQL plans the statement, so it plans each part for that many rows.
  const reach = `(${off} + ${lim})`;
  const part = (n: number, size: string, needed: string, walked: string, collected: string) => {
    const walk = `${WALK_COST_RATIO} * (${size})::float8 * (${size}) >= ${reach}::float8 * t.approved`;
    return `(SELECT ${n} AS part, l.id, l.created_at FROM libraries l ${t.where} AND ${walked} AND ${needed} AND ${walk}
           ORDER BY l.created_at DESC, l.id DESC LIMIT ${reach})
         UNION ALL
         (SELECT ${n}, c.id, c.created_at FROM (
             SELECT l.id, l.created_at FROM libraries l ${t.where} AND ${collected} AND ${needed} AND NOT ${walk}
             OFFSET 0) c
           ORDER BY c.created_at DESC, c.id DESC LIMIT ${reach})`;
  };
  // `coalesce` hides the column from the GIN index, so a walked part is walked, whatever PostgreSQL estimates.
  const walkedVector = `coalesce(l.search_vector, ''::tsvector)`;
  const rest = (vector: string) => `${vector} @@ ${t.all} AND NOT ${vector} @@ ${t.name}`;
  const parts = [
    part(
      1,
      't.in_name',
      't.in_name > 0',
      `${walkedVector} @@ ${t.name}`,
      `${NAME_VECTOR} @@ ${t.all}`,
    ),
    part(
      2,
      't.total - t.in_name',
      `t.total > t.in_name AND t.in_name < ${reach}`,
      rest(walkedVector),
      rest('l.search_vector'),
    ),
  ].join('\n         UNION ALL\n         ');
  const counts = `SELECT c.total, c.in_name,
         (SELECT coalesce(sum(approved), 0) FROM library_country_counts)::int AS approved
       FROM (${textCounts(t)}) c`;
  const page = `SELECT ${selected} FROM (
         SELECT * FROM (
           ${parts}) u
         ORDER BY u.part, u.created_at DESC, u.id DESC LIMIT ${lim} OFFSET ${off}) m
       JOIN libraries l ON l.id = m.id ORDER BY m.part, m.created_at DESC, m.id DESC`;
  return {
    text: `WITH t AS MATERIALIZED (${counts})
       ${withTotal ? `SELECT t.total, p.* FROM t LEFT JOIN LATERAL (${page}) p ON true` : `SELECT p.* FROM t CROSS JOIN LATERAL (${page}) p`}`,
    params: sql.params,
  };
}
