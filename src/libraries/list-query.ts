/**
 * The SQL of the public library list, built as plain data: no Nest, no database, no memo. Every statement the list
 * sends (count, page, count and page together, the ids of a ranked page, rows by id) comes from here, so unit tests
 * pin it (`list-query.spec.ts` and its committed SQL snapshots) and the query-plan tests EXPLAIN exactly what runs.
 */
import {
  circleCells,
  circleCover,
  type CellRun,
  type CircleCover,
  type EdgeRun,
} from './circle-cells.js';
import { nearBox, sphereBounds } from './near-box.js';

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

/**
 * `NOT HAS_PHOTO` as the indexes of libraries without a primary photo serve it: `photo_key IS NULL` on the row (their
 * predicate), then one probe of library_photos (newestWalkConditions, ofValuePhoto).
 */
const WITHOUT_ANY_PHOTO = `l.photo_key IS NULL AND NOT EXISTS (SELECT 1 FROM library_photos p
        WHERE p.library_id = l.id AND p.status = 'approved')`;

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
 * Whether a list's count is read from aggregate tables kept exact by triggers instead of counting libraries: the
 * default list, `country`, `has_photo` (`library_country_counts`), and one place filter with them (placeFilter);
 * or, for both places, from their pairs (bothPlacesCount, library_place_pairs). Never memoised.
 */
export function countsFromAggregate(search: LibrarySearch): boolean {
  // Proximity without a radius orders by distance but filters nothing: its count is the same list's without it.
  return (
    (!search.q &&
      !search.search &&
      !search.city &&
      !search.postalCode &&
      (!search.near || search.near.radiusMeters === undefined)) ||
    placeFilter(search) !== null ||
    bothPlaces(search)
  );
}

/**
 * A count over an aggregate table's `approved` and `with_photo` (libraries with a primary photo) for `has_photo`:
 * the approved libraries without a primary photo that have an approved community photo are added (or, for
 * has_photo=false, taken away), found through library_photos' status index (as many rows as such photos).
 * `sum(column)` sums a column over the aggregate's matching rows; `where` narrows those libraries the same way.
 */
function photoAwareCount(
  hasPhoto: boolean | undefined,
  sum: (column: 'approved' | 'with_photo') => string,
  where: string,
): string {
  if (hasPhoto === undefined) return `${sum('approved')}::int`;
  const communityOnly = `(SELECT count(DISTINCT p.library_id) FROM library_photos p
         JOIN libraries l ON l.id = p.library_id
         WHERE p.status = 'approved' AND l.status = 'approved' AND l.photo_key IS NULL${where})`;
  return hasPhoto
    ? `(${sum('with_photo')} + ${communityOnly})::int`
    : `(${sum('approved')} - ${sum('with_photo')} - ${communityOnly})::int`;
}

/**
 * The exact count of a list that countsFromAggregate accepts, as a scalar expression: sums over
 * `library_country_counts` (one row per country), or over the place counts for a place filter.
 */
function aggregateCount(sql: Sql, search: LibrarySearch): string {
  const place = placeFilter(search);
  if (place) return placeCount(sql, search, place);
  if (bothPlaces(search)) return bothPlacesCount(sql, search);
  const country = search.country ? sql.param(search.country.toUpperCase()) : null;
  return photoAwareCount(
    search.hasPhoto,
    (column) =>
      `(SELECT coalesce(sum(${column}), 0) FROM library_country_counts${country ? ` WHERE country = ${country}` : ''})`,
    country ? ` AND l.country = ${country}` : '',
  );
}

/**
 * Whether a list's statement is prepared: every list without a text filter (`q`, `search`, `city`, `postal_code`),
 * whose selectivity decides between an index and a scan; so the default list, `country`, `has_photo` and proximity.
 * Their plan is the same whatever the values (the count comes from aggregates or the grid, the page walks an index),
 * and planning is most of their work at 1M: about 0.35 ms per request with the 25 indexes of `libraries` (13 partial),
 * for 0.1 ms of execution (the default list replayed by pgbench: 0.49 pg-ms planned each time, 0.10 prepared).
 * Proximity's PostGIS conditions cost about 0.3 ms to plan already at 100k.
 */
export function worthPreparing(search: LibrarySearch): boolean {
  if (textPrepared(search)) return true;
  return !search.q && !search.search && !search.city && !search.postalCode;
}

/**
 * The OFFSET (or LIMIT) of a list's page as SQL. In a prepared statement it is a one-row subquery (an InitPlan): a custom plan
 * then cannot see its value either, so it is estimated exactly as the generic plan and PostgreSQL keeps the generic
 * plan after five executions. With a bare parameter every custom plan (offset known, 0 on a first page) looked
 * cheaper than the generic one (which assumes an offset of a tenth of the rows), and the default list was planned
 * on every request: 0.2–0.35 ms at 1M, more than it takes to run. The plan itself is the same walk either way.
 */
function pagingValue(sql: Sql, value: number, prepared: boolean): string {
  const param = `${sql.param(value)}::int`;
  return prepared ? `(SELECT ${param})` : param;
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
  if (search.country) {
    // Prepared (worthPreparing), the country is a one-row subquery, as pagingValue's values are: custom plans that
    // saw it chose the walk by the country's size (at 1M `country=DE&has_photo=false` walked the whole list's index,
    // DK its own), costed the rest below the generic plan, and the statement was planned on every request.
    const country = sql.param(search.country.toUpperCase());
    sql.and(
      `l.country = ${ordered && worthPreparing(search) ? `(SELECT ${country}::char(2))` : country}`,
    );
  }
  if (search.city) sql.and(placeMatches(PLACES.city, 'l', sql.param(likeEscape(search.city))));
  if (search.postalCode)
    sql.and(placeMatches(PLACES.postalCode, 'l', sql.param(likeEscape(search.postalCode))));
  if (search.hasPhoto === true) sql.and(HAS_PHOTO);
  if (search.hasPhoto === false) sql.and(`NOT ${HAS_PHOTO}`);
  if (search.search) {
    const { pattern } = substringPattern(sql.param(search.search));
    sql.and(`l.search_text LIKE ${pattern}`);
    rank = `(${nameLike('l', pattern)})`;
    order = `${rank} DESC, ${order}`;
  } else if (search.q) {
    // Only the condition: a `q` list is ordered by textPageQuery, or by distance.
    const words = searchWords(search.q);
    if (words) sql.and(`l.search_vector @@ ${prefixTsQuerySql(sql.param(words))}`);
  }
  if (search.near && (ordered || search.near.radiusMeters !== undefined)) {
    const prepared = worthPreparing(search);
    const point = nearPoint(sql, search.near, prepared);
    const { lat, lng, radiusMeters } = search.near;
    const box = radiusMeters === undefined || ordered ? null : nearBox(lat, lng, radiusMeters);
    if (box && radiusMeters !== undefined) {
      // The count: the same circle, read from libraries_approved_point_idx alone (an index-only scan, no heap
      // fetch per candidate). The box holds the whole circle (see nearBox) and only narrows the candidates;
      // _ST_DWithin is ST_DWithin's exact test without its pull towards libraries_location_idx, whose
      // candidates each cost a heap fetch. Same rows as the page's condition, at a third of the cost.
      // Prepared, the box is a one-row subquery too (nearPoint).
      const corner = (x: number, y: number) => `point(${sql.param(x)}, ${sql.param(y)})`;
      const around = `box(${corner(box.minLng, box.minLat)}, ${corner(box.maxLng, box.maxLat)})`;
      sql.and(`${APPROVED_POINT} <@ ${prepared ? `(SELECT ${around})` : around}`);
      sql.and(withinRadius(sql, point, search.near, radiusMeters));
    } else if (radiusMeters !== undefined && ordered) {
      // The page: nearest first from libraries_approved_unit_vector_idx, each row tested as it comes. Every row the
      // walk reads before the page's last is nearer than it, so inside the circle too: it reads the page and the
      // rows before it, no more (the LIMIT stops at the count). ST_DWithin's box drew PostgreSQL to
      // libraries_location_idx instead, reading and sorting every row of the circle's box (a dense 5 km circle at
      // 1M: 18,000 buffers, 440 ms cold). The walk stays within the box of unit vectors that holds the circle
      // (unitVectorReach).
      sql.and(
        `bookcase_unit_vector(l.location) &&& ST_Expand(bookcase_unit_vector(${point}), ${sql.param(unitVectorReach(radiusMeters))})`,
      );
      sql.and(withinRadius(sql, point, search.near, radiusMeters));
    } else if (radiusMeters !== undefined) {
      sql.and(`ST_DWithin(l.location, ${point}, ${sql.param(radiusMeters)})`);
    }
    // The distance alone: with a tie-breaker after it PostgreSQL 15 cannot take the order from the GiST index
    // (a KNN scan) and would compute and sort the distance of every approved row instead. The order of
    // `l.location <-> point` (the sphere's distance), from libraries_approved_unit_vector_idx (migration
    // 1766100000000): libraries_location_idx's KNN walk read nearly all of its 24,000 pages from a point far from
    // every library (at 1M: up to 830 ms for 20 rows).
    // Prepared (worthPreparing), the point's vector is a one-row subquery, as pagingValue's values are: a custom plan
    // that saw the point as a constant looked cheaper than the generic plan, so it was planned on every request.
    const target = `bookcase_unit_vector(${point})`;
    order = `bookcase_unit_vector(l.location) <<->> ${prepared ? `(SELECT ${target})` : target}`;
    rank = undefined;
  }
  return { order, rank };
}

/**
 * The centre of a proximity list as a geography. Prepared (worthPreparing), it is a one-row subquery, as pagingValue's
 * values are: a custom plan that saw the point (or the box or cells around it) as constants estimated fewer rows than
 * the generic plan, so a circle's count and page were planned on every request; and in a generic plan a bare
 * expression of parameters is computed again for every row a count reads, an InitPlan once.
 */
function nearPoint(sql: Sql, near: { lat: number; lng: number }, prepared: boolean): string {
  const point = `ST_SetSRID(ST_MakePoint(${sql.param(near.lng)}, ${sql.param(near.lat)}), 4326)::geography`;
  return prepared ? `(SELECT ${point})` : point;
}

/** Mean Earth radius (m), the sphere of `<->` on geography and of bookcase_unit_vector. */
const SPHERE_RADIUS_M = 6_371_008.8;

/**
 * Whether `l.location` lies within `radiusMeters` of `point` (geodesic on the spheroid, as ST_DWithin on geography
 * measures it), exactly, with the spheroid's distance computed only near the edge: around the circle the geodesic
 * is between `shortest` and `longest` times the sphere's distance (near-box.ts, sphereBounds; PostGIS's sphere has
 * the mean radius), so a library within (r − 1 m) / longest on the sphere is inside, and one beyond
 * (r + 1 m) / shortest outside. The spheroid's test costs about 1.7 µs per row at 1M, the sphere's 0.55 (backend CPU
 * over a 50 km circle near Paris, ~12,000 rows: 28.3 → 17.5 ms per count). Earth's bounds (0.994 … 1.005) left a
 * band of 1.1 % of the radius to the spheroid; the circle's own latitudes narrow it to 0.2–0.7 % (50 km at Berlin:
 * 1.00065 … 1.00327), which matters for the grid's edge libraries, all near the edge.
 */
function withinRadius(
  sql: Sql,
  point: string,
  near: { lat: number; lng: number },
  radiusMeters: number,
): string {
  const { shortest, longest } = sphereBounds(near.lat, near.lng, radiusMeters);
  const inner = sql.param((radiusMeters - 1) / longest);
  const outer = sql.param((radiusMeters + 1) / shortest);
  return `(_ST_DWithin(l.location, ${point}, ${inner}, false) OR (_ST_DWithin(l.location, ${point}, ${outer}, false)
      AND _ST_DWithin(l.location, ${point}, ${sql.param(radiusMeters)}, true)))`;
}

/**
 * Half the side of a box around a unit vector (bookcase_unit_vector) that holds the unit vectors of every point within
 * `radiusMeters` (geodesic, as ST_DWithin on geography measures it): the straight line between two unit vectors is
 * never longer than the angle between them, and the geodesic on the spheroid is at least 0.994 of the sphere's
 * distance (circle-cells.ts, SHORTEST). Rounded outwards (1 %, and 1e-6 ≈ 6 m against the index's single-precision
 * boxes). Only narrows an exact test.
 */
export function unitVectorReach(radiusMeters: number): number {
  return radiusMeters / 0.99 / SPHERE_RADIUS_M + 1e-6;
}

/** The count statement of a public list (also what query-plan tests EXPLAIN and what keys the count memo). */
export function countQuery(search: LibrarySearch): Statement {
  if (countsFromAggregate(search)) {
    const sql = new Sql();
    return { text: `SELECT ${aggregateCount(sql, search)} AS n`, params: sql.params };
  }
  const substring = soleSubstring(search);
  if (substring) return substringCountQuery(substring);
  const sql = new Sql();
  const words = orderedTextWords(search);
  if (words) {
    return {
      text: `SELECT c.total AS n FROM (${textCounts(textConditions(sql, search, words))}) c`,
      params: sql.params,
    };
  }
  const cells = circleCount(sql, search);
  if (cells) return { text: `SELECT ${cells} AS n`, params: sql.params };
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
  const substring = soleSubstring(search);
  if (substring) return substringPageQuery(substring, limit, offset, columns, false);
  const words = orderedTextWords(search);
  if (words) return textPageQuery(search, words, limit, offset, columns, false);
  const sql = new Sql();
  const { order } = addListConditions(sql, search, 'page');
  const selected = columns(sql);
  const prepared = worthPreparing(search);
  return {
    text: `SELECT ${selected} FROM libraries l ${sql.whereClause()}
       ORDER BY ${order} LIMIT ${pagingValue(sql, limit, prepared)} OFFSET ${pagingValue(sql, offset, prepared)}`,
    params: sql.params,
  };
}

/**
 * The page statement of a public list (also what query-plan tests EXPLAIN). A place filter's page (one place or both:
 * read alone only when the requested page lay past the end) is its count-and-page statement's rows (each with a
 * `total`, which nothing reads), prepared like it (countAndPagePrepared): as a plain substring condition on
 * `libraries`, the last page of a sparse place walked the whole list (at 1M `country=GB&postal_code=97` page 10 of
 * 118 matches: 0.4 s of CPU, 2.5–5 s under load).
 */
export function pageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
): Statement {
  if (placeFilter(search) || bothPlaces(search) || newestWalk(search, offset)) {
    const { text, params } = countAndPageQuery(search, userId, limit, offset);
    return { text: `SELECT c.* FROM (${text}) c WHERE c.id IS NOT NULL`, params };
  }
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
  const substring = soleSubstring(search);
  if (substring) return substringPageQuery(substring, limit, offset, listColumns, true);
  const words = orderedTextWords(search);
  if (words) return textPageQuery(search, words, limit, offset, listColumns, true);
  const place = placeFilter(search);
  if (place) return placeCountAndPageQuery(search, place, userId, limit, offset);
  if (bothPlaces(search)) return bothPlacesCountAndPageQuery(search, userId, limit, offset);
  if (newestWalk(search, offset)) return newestCountAndPage(search, userId, limit, offset);
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
  const cover = gridCover(search);
  let total: string;
  if (countsFromAggregate(search)) total = `SELECT ${aggregateCount(counting, search)} AS total`;
  // A circle's total is NULL when the grid must count it: the page is then read by circleGridCountAndPageQuery,
  // sent next with the grid's count (LIMIT 0 here reads nothing). OFFSET 0 keeps the subquery whole: pulled up, its
  // expression would be computed for the LIMIT and the column alike.
  else if (cover) total = `SELECT ${sparseCircleCount(counting, search, cover)} AS total OFFSET 0`;
  else {
    addListConditions(counting, search, 'count');
    total = `SELECT count(*)::int AS total FROM libraries l ${counting.whereClause()}`;
  }
  return pageAfterCount(
    sql,
    columns,
    order,
    total,
    cover !== null,
    limit,
    offset,
    worthPreparing(search),
  );
}

/**
 * The count and one page of a newestWalk list, like countAndPageQuery: the count from library_country_counts, the page
 * from index entries alone, then the page's own rows in full (a primary-key probe each; OFFSET 0 keeps it a probe).
 * The walk reads ids and dates (an index-only walk of the newest approved libraries, or of the country's), and
 * for `has_photo=true` the heap row of each entry (its `photo_key`; a probe of libraries_approved_without_photo_idx
 * per entry instead, as placePhoto does, cost more warm: 0.49 against 0.40 CPU-ms over the replay's 268 such lists);
 * `has_photo=false` walks the partial indexes of libraries without a primary photo (`photo_key IS NULL` implies their
 * predicate; migrations 1768002000000 and 1768110000000) with a probe of library_photos. Read with the columns, a
 * deep page fetched the heap row of every entry it skipped or rejected, and computed the columns of each one skipped.
 * At 1M (2,000 list-filters requests, seed 7, warm, load 6): the 127 such pages from page 5 on 0.96 → 0.61 backend
 * CPU-ms on average, p99 3.8 → 2.3 (at load 12: 1.48 → 0.73, `country=AT&page_size=50&page=17` 10.6 → under 3.5).
 * The walk is a LATERAL subquery of the count's row (its LIMIT reads `t.total`): as a plain subquery beside the
 * probes, PostgreSQL, which cannot know the LIMIT, costed a parallel read of every entry and a sort below the walk
 * (the default list page 2 at 1M: 700 ms).
 */
function newestCountAndPage(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
): Statement {
  const sql = new Sql();
  const columns = [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  const total = `SELECT ${aggregateCount(sql, search)} AS total`;
  const where = newestWalkConditions(sql, search);
  const limitParam = sql.param(limit);
  const offsetParam = pagingValue(sql, offset, true);
  const wanted = `least(${limitParam}::int, greatest(t.total - ${offsetParam}, 0))`;
  return {
    text: `SELECT t.total, r.* FROM (${total}) t
     LEFT JOIN LATERAL (SELECT l.id, l.created_at FROM libraries l WHERE ${where}
       ORDER BY l.created_at DESC, l.id DESC LIMIT ${wanted} OFFSET ${offsetParam}) m ON true
     LEFT JOIN LATERAL (SELECT ${columns} FROM libraries l WHERE l.id = m.id OFFSET 0) r ON true
     ORDER BY m.created_at DESC, m.id DESC`,
    params: sql.params,
  };
}

/**
 * Whether a list's page is read by newestCountAndPage: a page after the first of the default list, `country`,
 * `has_photo` (no place, text or proximity filter). The first page reads its rows as it walks (countAndPageQuery's
 * plain statement), which costs less than the walk and a probe per row when nothing is skipped (at 1M, the 826 first
 * pages of 2,000 list-filters requests: 0.31 backend CPU-ms each read as they walk, 0.46 walked then probed).
 */
function newestWalk(search: LibrarySearch, offset: number): boolean {
  return (
    offset > 0 && !search.q && !search.search && !search.city && !search.postalCode && !search.near
  );
}

/** The conditions of newestCountAndPage's walk (their parameters in `sql`). */
function newestWalkConditions(sql: Sql, search: LibrarySearch): string {
  const where = [`l.status = 'approved'`];
  if (search.country) where.push(`l.country = ${circleCountry(sql, search.country)}`);
  if (search.hasPhoto === true) where.push(HAS_PHOTO);
  if (search.hasPhoto === false) where.push(WITHOUT_ANY_PHOTO);
  return where.join(' AND ');
}

/**
 * The count (`total`, a subquery of one row) and the page of a list ordered by date or distance, in one statement.
 * The page reads at most the rows the count found past `offset` (LIMIT 0 reads nothing, nor does a NULL total when
 * `nullable`): nearest first, a walk otherwise goes on through every row of the index's box that fails the radius
 * once the circle's few matches are found (at 1M, an empty 25 km circle beside a city: 4,277 heap fetches, 450 ms
 * cold). A `prepared` statement takes its offset as a one-row subquery (preparedOffset).
 */
function pageAfterCount(
  sql: Sql,
  columns: string,
  order: string,
  total: string,
  nullable: boolean,
  limit: number,
  offset: number,
  prepared: boolean,
): Statement {
  const limitParam = sql.param(limit);
  const offsetParam = pagingValue(sql, offset, prepared);
  const counted = nullable ? 'coalesce(t.total, 0)' : 't.total';
  return {
    text: `SELECT t.total, p.* FROM (${total}) t
       LEFT JOIN LATERAL (SELECT ${columns} FROM libraries l ${sql.whereClause()}
         ORDER BY ${order} LIMIT least(${limitParam}::int, greatest(${counted} - ${offsetParam}, 0))
         OFFSET ${offsetParam}) p ON true`,
    params: sql.params,
  };
}

/**
 * The count of a proximity circle from the map's grid and its page, in one statement: what the list sends when
 * countAndPageQuery's total is NULL (a circle whose coarse cells hold GRID_COUNT_FROM libraries or more). Null when
 * the grid cannot serve the circle.
 */
export function circleGridCountAndPageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
): Statement | null {
  const sql = new Sql();
  const { order } = addListConditions(sql, search, 'page');
  const columns = [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  const count = gridCircleCount(new Sql(sql.params), search);
  if (!count) return null;
  const total = `SELECT ${count} AS total OFFSET 0`;
  return pageAfterCount(sql, columns, order, total, false, limit, offset, true);
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

/**
 * From this many index entries on, a bitmapped walk tests bits rather than tsvectors: the bits cost about 0.6 ms to
 * build (a word's ~120 rows of library_search_bitmaps at 1M) and save about 0.17 µs per entry.
 */
const BIT_WALK_FROM = 4000;

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
  /** The parameter of `country` when it is the only other filter (counted with library_country_bitmaps). */
  country: string | null;
  /**
   * For `q` alone or with `country` alone: SQL that is true when library_search_bitmaps (and the country's) hold the
   * matches exactly (every lexeme at most SEARCH_PREFIX_MAX_CHARS long), an immutable function of a constant, so
   * computed when PostgreSQL plans the statement. Null for other lists, whose matches only `libraries` knows.
   */
  bitmapped: string | null;
  lexemes: string;
  /**
   * Prepared: the definition of the CTE `v`, which computes the words' lexemes and tsqueries once per execution (the
   * fields above and below read it as one-row subqueries); null unprepared.
   */
  values: string | null;
  /** The tsquery of all matches, and of the matches whose name holds every word. */
  all: string;
  name: string;
}

/**
 * Whether a `q` list ordered by text is prepared (worthPreparing): `q` alone, or with `country` and/or `has_photo`.
 * Its statement (textPageQuery) then hides every value in a one-row subquery (an InitPlan), as pagingValue does: the
 * words' tsqueries and lexemes, the country, the page. Planning was 1.5–2 ms of a cheap `q` statement's 2–2.5 ms at
 * 1M (every branch of textCounts and textPageQuery, each reference to `libraries` weighing its 25 indexes); with the
 * values hidden, custom plans cost what the generic plan costs and PostgreSQL keeps it after five executions. With
 * `city` or `postal_code` the statement stays unprepared: its best plan depends on the place's text.
 */
function textPrepared(search: LibrarySearch): boolean {
  return orderedTextWords(search) !== null && !search.city && !search.postalCode;
}

/**
 * The largest window of ids textPageWindow memoises (offset + limit beyond it: the page's own ids): the memo's 1,000
 * entries then hold at most about 8 MB of ids.
 */
export const TEXT_PAGE_WINDOW_MAX = 1024;

/**
 * The ids a memoised `q` page is read as (the memo's page statement, pageIdsQuery, with this limit and offset 0): for
 * a page after the first, every id before its end, up to the next power of two of `offset + limit`; null for the first
 * page, for other lists and past TEXT_PAGE_WINDOW_MAX (the page's own ids). Every part of a `q` page is read from the
 * top of its order (walked newest first or collected and sorted), so the ids up to the window's end cost what the page
 * alone costs up to twice: at 1M a deep page's walk is 5–17 pg CPU-ms (`münchen` page 20: 55k index entries), and
 * with one window the other pages within it are memo hits instead of walks of their own.
 */
export function textPageWindow(
  search: LibrarySearch,
  limit: number,
  offset: number,
): number | null {
  if (offset === 0 || !orderedTextWords(search)) return null;
  const window = 2 ** Math.ceil(Math.log2(offset + limit));
  return window <= TEXT_PAGE_WINDOW_MAX ? window : null;
}

/**
 * The conditions of a `q` list. `prepared` (textPrepared): every value is a one-row subquery, so the choices that
 * PostgreSQL made from the constants when planning (which of textCounts' branches runs, bitmaps or not) are made when
 * the statement runs (one-time filters on InitPlans), and each tsquery is still computed once per execution (a bare
 * expression of a parameter would be computed again for every row a filter reads).
 */
function textConditions(
  sql: Sql,
  search: LibrarySearch,
  words: string,
  prepared = false,
): TextConditions {
  const base = new Sql(sql.params);
  addListConditions(base, { ...search, q: undefined, country: undefined }, 'count');
  // The status is then the base's only condition unless has_photo (city and postal_code) add theirs.
  const alone = base.where.length === 1;
  let country: string | null = null;
  if (search.country) {
    const param = sql.param(search.country.toUpperCase());
    const value = prepared ? `(SELECT ${param}::char(2))` : param;
    base.and(`l.country = ${value}`);
    // `country` alone besides `q`: counted with library_country_bitmaps.
    if (alone) country = value;
  }
  const param = sql.param(words);
  const textOnly = alone && !search.country;
  const bitmapped = textOnly || country !== null;
  if (!prepared) {
    const lexemes = queryLexemesSql(param);
    return {
      where: base.whereClause(),
      textOnly,
      country,
      bitmapped: bitmapped ? `bookcase_search_prefixed(${lexemes})` : null,
      lexemes,
      values: null,
      all: prefixTsQuerySql(param),
      name: prefixTsQuerySql(param, 'A'),
    };
  }
  // Each read of `v` is an InitPlan of its own; the words are folded and parsed once. Cast, so that
  // `= ANY (lexemes)` stays an array comparison (`ANY ((SELECT …))` would compare with each row).
  const read = (column: string, type: string) => `((SELECT v.${column} FROM v)::${type})`;
  const lexemes = queryLexemesSql(param);
  return {
    where: base.whereClause(),
    textOnly,
    country,
    bitmapped: bitmapped ? read('bitmapped', 'boolean') : null,
    lexemes: read('lexemes', 'text[]'),
    values: `SELECT x.lexemes, bookcase_search_prefixed(x.lexemes) AS bitmapped,
             ${prefixTsQuerySql(param)} AS all_words, ${prefixTsQuerySql(param, 'A')} AS name_words
           FROM (SELECT ${lexemes} AS lexemes) x`,
    all: read('all_words', 'tsquery'),
    name: read('name_words', 'tsquery'),
  };
}

/**
 * A row of the exact number of matches (`total`) and of name matches (`in_name`). For `q` alone, with every lexeme
 * of at most SEARCH_PREFIX_MAX_CHARS characters: one lexeme (one word, a prefix query) is one row of
 * library_search_prefixes; several are the AND of their prefixes' bitmaps in library_search_bitmaps, chunk by chunk
 * of 8,192 ids (about 120 rows per word at 1M, whatever the number of matches: through GIN, PostgreSQL 15 reads a heap
 * page per match, seconds cold for `book swap`). With `country` as the only other filter, any number of such words:
 * the same AND with the country's bitmap (library_country_bitmaps). Otherwise counted from `libraries`, both in one
 * scan (linear in the matches). The branches not taken are one-time filters that are false and read nothing: folded
 * when PostgreSQL plans the statement (unprepared, the lexemes are constants), or tested once when it runs (prepared,
 * the lexemes are an InitPlan: textConditions).
 */
function textCounts(t: TextConditions): string {
  const counted = `SELECT count(*) AS total, count(*) FILTER (WHERE l.search_vector @@ ${t.name}) AS in_name
           FROM libraries l ${t.where} AND l.search_vector @@ ${t.all}`;
  if (t.bitmapped === null) return `SELECT total::int, in_name::int FROM (${counted}) c`;
  const prefixed = t.bitmapped;
  if (t.country !== null) {
    return `SELECT coalesce(sum(c.total), 0)::int AS total, coalesce(sum(c.in_name), 0)::int AS in_name FROM (
           ${counted} AND NOT ${prefixed}
           UNION ALL
           SELECT bit_count(b.approved), bit_count(b.in_name) FROM (
             SELECT bit_and(x.approved) AS approved, bit_and(x.in_name) AS in_name FROM (
               SELECT s.chunk, s.approved, s.in_name FROM library_search_bitmaps s
               WHERE ${prefixed} AND s.prefix = ANY (${t.lexemes})
               UNION ALL
               SELECT k.chunk, k.approved, k.approved FROM library_country_bitmaps k
               WHERE ${prefixed} AND k.country = ${t.country}) x
             GROUP BY x.chunk HAVING count(*) = cardinality(${t.lexemes}) + 1) b) c`;
  }
  const single = `cardinality(${t.lexemes}) = 1 AND char_length((${t.lexemes})[1]) <= ${SEARCH_PREFIX_MAX_CHARS}`;
  const several = `cardinality(${t.lexemes}) > 1 AND ${prefixed}`;
  return `SELECT coalesce(sum(c.total), 0)::int AS total, coalesce(sum(c.in_name), 0)::int AS in_name FROM (
           ${counted} AND NOT (${single}) AND NOT (${several})
           UNION ALL
           SELECT s.approved, s.in_name FROM library_search_prefixes s
           WHERE ${single} AND s.prefix = (${t.lexemes})[1]
           UNION ALL
           SELECT bit_count(b.approved), bit_count(b.in_name) FROM (
             SELECT bit_and(s.approved) AS approved, bit_and(s.in_name) AS in_name FROM library_search_bitmaps s
             WHERE ${several} AND s.prefix = ANY (${t.lexemes})
             GROUP BY s.chunk HAVING count(*) = cardinality(${t.lexemes})) b) c`;
}

/**
 * A page of a `q` list: the libraries whose name holds every word first, then the others, newest first within each
 * (decisions: "ranked name above description"). The counts come first (`t`, materialised: computed once); each part
 * then reads at most its first `offset + limit` rows, not at all when it is empty or lies past the page (a one-time
 * filter on `t`), in one of three ways chosen by its exact size (WALK_COST_RATIO, BIT_WALK_FROM):
 *
 * - walking libraries_approved_created_search_idx newest first, testing each entry's tsvector, and stopping after the
 *   page (many matches: index entries only);
 * - for a bitmapped list (`q` alone or with `country`) whose walk reads BIT_WALK_FROM entries or more (`t.bits1`,
 *   `t.bits2`): the same walk by bookcase_search_walk (migration 1767000000000), which tests each library's bit in the
 *   matches' bitmaps on the narrowest index of the order, or the country's (half the CPU per entry: `köln` page 6 at
 *   1M, 33k entries, 12–14 → 6 ms; with `country` no heap row per entry: `köln` in DE, page 5, 107 → 5 ms);
 * - collecting its matches through a GIN index and sorting them (few matches: a heap row each).
 *
 * Ranking every match with ts_rank read each match's heap row (at 1M, `books`: 4 s cold).
 */
function textPageQuery(
  search: LibrarySearch,
  words: string,
  limit: number,
  offset: number,
  columns: (sql: Sql) => string,
  withTotal: boolean,
  walkBy: TextWalk = { ratio: WALK_COST_RATIO, bitsFrom: BIT_WALK_FROM },
): Statement {
  const sql = new Sql();
  const selected = columns(sql);
  const prepared = textPrepared(search);
  const t = textConditions(sql, search, words, prepared);
  const lim = pagingValue(sql, limit, prepared);
  const off = pagingValue(sql, offset, prepared);
  // Unprepared, a constant when PostgreSQL plans the statement, so it plans each part for that many rows; prepared,
  // a sum of two InitPlans (each part planned for a tenth of its rows: the same plans at 1M).
  const reach = `(${off} + ${lim})`;
  const bitmapped = t.bitmapped !== null;
  const part = (n: number, size: string, needed: string, walked: string, collected: string) => {
    const walk = `${walkBy.ratio} * (${size})::float8 * (${size}) >= ${reach}::float8 * t.approved`;
    // The walk filters the list newest first as an index gives it: the LIMIT of no effect is an InitPlan, whose value
    // the planner cannot know, so it plans the inner list for its first rows (an index in order) and the filter
    // cannot move below it. With the filter beside the order, PostgreSQL estimated three words' matches as a few
    // rows and read and sorted every match (`little free library`, 88,378 matches: 152k buffers, 1.1 s).
    const walkedPart = `(SELECT ${n} AS part, l.id, l.created_at FROM (
             SELECT l.id, l.created_at, l.search_vector FROM libraries l ${t.where}
             ORDER BY l.created_at DESC, l.id DESC LIMIT (SELECT ${Number.MAX_SAFE_INTEGER}::bigint)) l
           WHERE ${walked} AND ${needed} AND ${bitmapped ? `NOT t.bits${n} AND ${walk}` : walk}
           ORDER BY l.created_at DESC, l.id DESC LIMIT ${reach})`;
    const bitWalked = `(SELECT ${n}, w.library_id, w.library_created_at
           FROM bookcase_search_walk(${t.lexemes}, ${t.country ?? 'NULL'}, ${n === 1}, ${reach}) w
           WHERE ${needed} AND t.bits${n} AND ${walk})`;
    const collectedPart = `(SELECT ${n}, c.id, c.created_at FROM (
             SELECT l.id, l.created_at FROM libraries l ${t.where} AND ${collected} AND ${needed} AND NOT ${walk}
             OFFSET 0) c
           ORDER BY c.created_at DESC, c.id DESC LIMIT ${reach})`;
    return (bitmapped ? [walkedPart, bitWalked, collectedPart] : [walkedPart, collectedPart]).join(
      '\n         UNION ALL\n         ',
    );
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
  const approved = `(SELECT coalesce(sum(approved), 0) FROM library_country_counts)::int AS approved`;
  // Whether a part's walk tests bits (BIT_WALK_FROM). OFFSET 0: pulled up, the subquery of `approved` would be
  // planned and run once per use.
  const bitsOf = (size: string) =>
    `(c.bitmapped AND ${reach}::float8 * c.approved >= ${walkBy.bitsFrom}::float8 * (${size}))`;
  const counts = bitmapped
    ? `SELECT c.*, ${bitsOf('c.in_name')} AS bits1, ${bitsOf('c.total - c.in_name')} AS bits2 FROM (
         SELECT c.total, c.in_name, ${approved}, ${t.bitmapped} AS bitmapped FROM (${textCounts(t)}) c
         OFFSET 0) c`
    : `SELECT c.total, c.in_name, ${approved} FROM (${textCounts(t)}) c`;
  const pageIds = `SELECT * FROM (
           ${parts}) u
         ORDER BY u.part, u.created_at DESC, u.id DESC LIMIT ${lim} OFFSET ${off}`;
  // Prepared, the page's rows are read one by one by id (a LATERAL subquery kept apart by OFFSET 0): the generic plan
  // estimates the page at a tenth of the parts' rows (the LIMIT is an InitPlan), and on a small list it then read every
  // library to hash-join them (6,000 libraries: a sequential scan per page).
  const page = prepared
    ? `SELECT r.* FROM (${pageIds}) m
       CROSS JOIN LATERAL (SELECT ${selected} FROM libraries l WHERE l.id = m.id OFFSET 0) r
       ORDER BY m.part, m.created_at DESC, m.id DESC`
    : `SELECT ${selected} FROM (${pageIds}) m
       JOIN libraries l ON l.id = m.id ORDER BY m.part, m.created_at DESC, m.id DESC`;
  return {
    text: `WITH ${t.values === null ? '' : `v AS MATERIALIZED (${t.values}), `}t AS MATERIALIZED (${counts})
       ${withTotal ? `SELECT t.total, p.* FROM t LEFT JOIN LATERAL (${page}) p ON true` : `SELECT p.* FROM t CROSS JOIN LATERAL (${page}) p`}`,
    params: sql.params,
  };
}
/**
 * WALK_COST_RATIO for a `search` walk, which tests a bit per index entry (about 1–1.5 µs at 1M under load, plus 2–9 ms
 * to lay the part's chunks end to end) against collecting the matches through a trigram index (about 15 µs per match
 * cold: `1011`, 1,069 matches, 1,288 buffers in 20 ms). Measured at 1M: 1,069 matches walked (17k entries) took
 * 34–40 ms cold where collecting took 18–21 ms. With 8 a first page is walked from about 1,500 matches on.
 */
const SUBSTRING_WALK_COST_RATIO = 8;

/**
 * The folded text of a `search` parameter (as `search_text` is folded) and its LIKE pattern `%…%`, escaped after
 * folding, which can itself produce a LIKE metacharacter (∖ → \).
 */
function substringPattern(param: string): { folded: string; pattern: string } {
  const folded = `lower(bookcase_unaccent(${param}))`;
  return { folded, pattern: containsPattern(folded) };
}

/** The LIKE pattern `%…%` of a folded text, its LIKE metacharacters escaped. */
function containsPattern(folded: string): string {
  const escaped = `replace(replace(replace(${folded}, '\\', '\\\\'), '%', '\\%'), '_', '\\_')`;
  return `'%' || ${escaped} || '%'`;
}

/** Whether the folded name of the row `alias` holds a substring (what ranks a `search` match first). */
function nameLike(alias: string, pattern: string): string {
  return `lower(bookcase_unaccent(${alias}.name)) LIKE ${pattern}`;
}

/**
 * The text of a `search` that is its list's only filter (`q` aside: `search` wins over it) and that the token bitmaps
 * can most likely count (as bookcase_search_tokenized decides on the folded text: 3–100 characters, at most one
 * space, three letters or digits in a row), or those of shortSubstringTable (1–2 characters, two spaces); null
 * otherwise. Others keep the plain statements, which find and rank
 * every match in one scan: split into two parts, a 2-character substring read every approved name again (at 1M,
 * `10`: 1.1–1.5 s before, 3.9–8.2 s split). Where this guess and the folded text disagree (`½` folds to ` 1/2`), the
 * statement's own fallback counts the libraries: slower, never wrong.
 */
function soleSubstring(search: LibrarySearch): string | null {
  const { search: text, near, city, country, postalCode, hasPhoto } = search;
  if (!text || near || city || country || postalCode || hasPhoto !== undefined) return null;
  const tokenizable =
    text.length >= 3 &&
    text.length <= 100 &&
    text.split(' ').length <= 2 &&
    /[\p{L}\p{N}]{3}/u.test(text);
  return tokenizable || shortSubstringTable(text) || checkedSubstringTable(text) ? text : null;
}

/**
 * The table of migration 1767800000000 that most likely counts a substring library_search_tokens cannot (as
 * bookcase_search_gram and bookcase_search_tripled decide on the folded text): library_search_grams for one or two
 * characters without a space, library_search_triples for 3–100 characters with two spaces and three letters or
 * digits in a row; null otherwise (tokens, or neither). A wrong guess costs the statement's own fallback, as in
 * soleSubstring.
 */
function shortSubstringTable(
  text: string,
): 'library_search_grams' | 'library_search_triples' | null {
  if ([...text].length <= 2 && !text.includes(' ')) return 'library_search_grams';
  const tripled =
    text.length >= 3 &&
    text.length <= 100 &&
    text.split(' ').length === 3 &&
    /[\p{L}\p{N}]{3}/u.test(text);
  return tripled ? 'library_search_triples' : null;
}

/**
 * The table whose bitmaps give a superset of the matches of a substring that no table counts exactly (checked
 * against `search_text` one candidate at a time, brief 22t): library_search_triples for three spaces or more with
 * three letters or digits in a row (every window of three of its space-separated parts, `p0 p1 p2`, lies in one
 * window of three neighbouring tokens of a match: the AND of the windows' ORs), library_search_grams for a substring
 * without three letters or digits in a row (every gram of one or two characters of it is in a match: the AND of the
 * grams' rows); null otherwise. A guess on the text as sent, as shortSubstringTable's: the statement finds the keys in
 * the folded text (checkedKeys) and counts the libraries when there are none.
 */
function checkedSubstringTable(
  text: string,
): 'library_search_grams' | 'library_search_triples' | null {
  if (shortSubstringTable(text)) return null;
  const alnum = /[\p{L}\p{N}]{3}/u.test(text);
  if (alnum && text.split(' ').length >= 4) return 'library_search_triples';
  if (!alnum && /[^ ]/.test(text)) return 'library_search_grams';
  return null;
}

/**
 * A checked substring's candidates are checked one by one (an id from the bits, a primary-key probe, the heap row:
 * 4–8 µs each at 1M) while `ratio · candidates ≤ approved`; more are left to the one scan of
 * libraries_search_text_trgm_idx, as before. Windows: always (at 1M, `rund um die uhr`'s 115,847 candidates are its
 * matches; checking them cost 590–680 ms of CPU, this statement's scan 875–990). Grams: a 64th (their candidates
 * are loose: `e am p` 148,217 for no match, checked 730–800 ms against the scan's 100–200; `x y z` 18,348 for no
 * match, 70 ms against 3).
 */
const CHECKED_CANDIDATE_RATIO = { library_search_triples: 1, library_search_grams: 64 };

/**
 * The keys of checkedSubstringTable's table in a folded substring, as an array: for library_search_triples its
 * windows of three space-separated parts with three letters or digits in a row and at most 100 characters (a window of
 * a match, or the piece of it that holds such a key, is kept: bookcase_search_triples), `=` and the window for one
 * of three whole tokens (neither the first part nor the last: a window of the table itself, read by its primary key),
 * else `%` and the window (held by the table's windows, through its trigram index); only the whole ones when there
 * are any (at 1M, `ntreal 9 boulevard saint-laurent h`'s end windows held 1,924 rows each, 110 ms); for
 * library_search_grams its
 * distinct characters and pairs of characters without a space (bookcase_search_grams).
 */
function checkedKeys(
  table: 'library_search_grams' | 'library_search_triples',
  folded: string,
): string {
  if (table === 'library_search_triples')
    return `ARRAY(SELECT DISTINCT CASE WHEN w.mid THEN '=' ELSE '%' END || w.x FROM (
               SELECT u.x, u.mid, bool_or(u.mid) OVER () AS any_mid FROM (
                 SELECT a.a[i] || ' ' || a.a[i + 1] || ' ' || a.a[i + 2] AS x, i > 1 AND i + 3 <= cardinality(a.a) AS mid
                 FROM (SELECT string_to_array(${folded}, ' ') AS a) a, generate_subscripts(a.a, 1) i
                 WHERE i + 2 <= cardinality(a.a)) u
               WHERE u.x ~ '[[:alnum:]]{3}' AND char_length(u.x) <= 100) w
             WHERE w.mid OR NOT w.any_mid)`;
  return `ARRAY(SELECT DISTINCT g.x FROM (
               SELECT x FROM string_to_table(${folded}, NULL) x
               UNION ALL
               SELECT substr(${folded}, i, 2) FROM generate_series(1, char_length(${folded}) - 1) i) g(x)
             WHERE strpos(g.x, ' ') = 0)`;
}

/**
 * Per chunk, the candidates of a checked substring: the AND over its keys (`keys`, an array) of each key's bitmaps
 * (a window: the OR of the rows of the table's windows that hold it, through its trigram index; a gram: its row),
 * for the text (`approved`) and the name (`in_name`). Only chunks every key has.
 */
function checkedChunks(
  table: 'library_search_grams' | 'library_search_triples',
  keys: string,
): string {
  const rows =
    table === 'library_search_triples'
      ? `SELECT k.n, s.chunk, s.approved, s.in_name FROM unnest(${keys}) WITH ORDINALITY k(key, n)
             JOIN library_search_triples s ON s.token = substr(k.key, 2) WHERE left(k.key, 1) = '='
             UNION ALL
             SELECT k.n, s.chunk, bit_or(s.approved), bit_or(s.in_name) FROM unnest(${keys}) WITH ORDINALITY k(key, n)
             JOIN library_search_triples s ON s.token LIKE ${containsPattern('substr(k.key, 2)')}
             WHERE left(k.key, 1) = '%' GROUP BY k.n, s.chunk`
      : `SELECT k.n, s.chunk, s.approved, s.in_name FROM unnest(${keys}) WITH ORDINALITY k(key, n)
             JOIN library_search_grams s ON s.token = k.key`;
  return `SELECT r.chunk, bit_and(r.approved) AS approved, bit_and(r.in_name) AS in_name FROM (
           ${rows}) r
           GROUP BY r.chunk HAVING count(*) = cardinality(${keys})`;
}

/**
 * The matches of a checked substring among the candidates of `c` (checkedChunks), each checked against the library's
 * `search_text` through the primary key (a probe each, in id order), and whether its folded name holds it (checked
 * only where every key is in the name). Linear in the candidates, not in the libraries.
 */
function checkedMatches(pattern: string, gate: string): string {
  return `SELECT l.id, l.created_at, l.named FROM (${bitIds('c.approved', ', get_bit(c.in_name, p.pos) = 1')}) x(id, in_name)
           CROSS JOIN LATERAL (
             SELECT l.id, l.created_at, CASE WHEN x.in_name THEN ${nameLike('l', pattern)} ELSE false END AS named
             FROM libraries l WHERE l.id = x.id AND l.status = 'approved' AND l.search_text LIKE ${pattern}
             OFFSET 0) l
           WHERE ${gate}`;
}

interface SubstringConditions {
  /**
   * Whether the substring is counted from bitmaps (library_search_tokens: bookcase_search_tokenized; or
   * shortSubstringConditions' tables), a plan-time constant.
   */
  tokenized: string;
  pattern: string;
  /** `c`: per chunk, the OR of the bitmaps of every token that holds the substring (no row unless tokenized). */
  chunks: string;
  /** A row of the exact number of matches (`total`) and of name matches (`in_name`), from `c` or counted. */
  counts: string;
  /**
   * Whether a small part is collected from the bits of `c` rather than through a trigram index (none narrows a
   * substring of one or two characters: the index or the table would be read whole).
   */
  collectsBits?: boolean;
}

/**
 * The counts of a `search` alone (soleSubstring). A substring of 3 to 100 folded characters lies in one
 * space-separated token of `search_text` (or of the folded name) when it has no space, in a pair of neighbouring
 * tokens when it has one, so its matches are the OR of the bitmaps of the tokens and pairs that hold it (migration
 * 1767500000000): they are found through the table's trigram index, and the count is the bits set, whatever the
 * number of matches (at 1M, `bücher`: 355,932 matches through the libraries' trigram index read 126k buffers, about
 * 1–1.6 s cold). Shorter substrings, with two spaces or more, or without three letters or digits in a row, are
 * counted from `libraries` (linear in the matches). The branch is chosen when PostgreSQL plans the statement: the
 * pattern is a constant.
 */
function substringConditions(sql: Sql, text: string): SubstringConditions {
  const { folded, pattern } = substringPattern(sql.param(text));
  const checked = checkedSubstringTable(text);
  if (checked) return checkedSubstringConditions(checked, folded, pattern);
  const short = shortSubstringTable(text);
  if (short) return shortSubstringConditions(short, folded, pattern);
  const tokenized = `bookcase_search_tokenized(${folded})`;
  // Tokens for a substring without a space, pairs for one with (each has its partial trigram index).
  const pairs = `CASE WHEN strpos(${folded}, ' ') > 0 THEN strpos(s.token, ' ') > 0
             ELSE strpos(s.token, ' ') = 0 END`;
  return {
    tokenized,
    pattern,
    chunks: `SELECT s.chunk, bit_or(s.approved) AS approved, bit_or(s.in_name) AS in_name
           FROM library_search_tokens s WHERE ${tokenized} AND s.token LIKE ${pattern}
             AND ${pairs} GROUP BY s.chunk`,
    counts: bitmapCounts(tokenized, pattern),
  };
}

/**
 * A row of the exact number of matches (`total`) and of name matches (`in_name`): the bits set in `c` when
 * `bitmapped` (a plan-time constant), otherwise counted from the libraries (linear in the matches).
 */
function bitmapCounts(bitmapped: string, pattern: string): string {
  return `SELECT coalesce(sum(x.total), 0)::int AS total, coalesce(sum(x.in_name), 0)::int AS in_name FROM (
           SELECT bit_count(c.approved) AS total, bit_count(c.in_name) AS in_name FROM c
           UNION ALL
           SELECT count(*), count(*) FILTER (WHERE ${nameLike('l', pattern)}) FROM libraries l
           WHERE NOT ${bitmapped} AND l.status = 'approved' AND l.search_text LIKE ${pattern}) x`;
}

/**
 * substringConditions for a substring of one or two characters (one gram of library_search_grams: its rows are the
 * matches) or with two spaces (in a window of three neighbouring tokens of library_search_triples: the OR of the
 * rows of the windows that hold it, found through the table's trigram index). Migration 1767800000000; at 1M, both
 * were a read of every heap page holding a match (`10`, 182,430 matches: 1.1–2.1 s cold).
 */
function shortSubstringConditions(
  table: 'library_search_grams' | 'library_search_triples',
  folded: string,
  pattern: string,
): SubstringConditions {
  if (table === 'library_search_grams') {
    const bitmapped = `bookcase_search_gram(${folded})`;
    return {
      tokenized: bitmapped,
      pattern,
      chunks: `SELECT s.chunk, s.approved, s.in_name FROM library_search_grams s
           WHERE ${bitmapped} AND s.token = ${folded}`,
      counts: bitmapCounts(bitmapped, pattern),
      collectsBits: true,
    };
  }
  const bitmapped = `bookcase_search_tripled(${folded})`;
  return {
    tokenized: bitmapped,
    pattern,
    chunks: `SELECT s.chunk, bit_or(s.approved) AS approved, bit_or(s.in_name) AS in_name
           FROM library_search_triples s WHERE ${bitmapped} AND s.token LIKE ${pattern} GROUP BY s.chunk`,
    counts: bitmapCounts(bitmapped, pattern),
  };
}

/**
 * substringConditions for a checked substring (checkedSubstringTable): the candidates' chunks, and the counts of the
 * candidates that hold it (or, without a key, of the libraries).
 */
function checkedSubstringConditions(
  table: 'library_search_grams' | 'library_search_triples',
  folded: string,
  pattern: string,
): SubstringConditions {
  const keyed = `(cardinality(${checkedKeys(table, folded)}) > 0 AND ${CHECKED_CANDIDATE_RATIO[table]}
             * (SELECT coalesce(sum(bit_count(c.approved)), 0) FROM c)
             <= (SELECT coalesce(sum(approved), 0) FROM library_country_counts))`;
  return {
    tokenized: 'false',
    pattern,
    chunks: checkedChunks(table, checkedKeys(table, folded)),
    counts: `SELECT coalesce(sum(x.total), 0)::int AS total, coalesce(sum(x.in_name), 0)::int AS in_name FROM (
           SELECT count(*) AS total, count(*) FILTER (WHERE m.named) AS in_name FROM (
             ${checkedMatches(pattern, keyed)}) m
           UNION ALL
           SELECT count(*), count(*) FILTER (WHERE ${nameLike('l', pattern)}) FROM libraries l
           WHERE NOT ${keyed} AND l.status = 'approved' AND l.search_text LIKE ${pattern}) x`,
  };
}

/** The count statement of a `search` alone (also what keys the count memo). */
function substringCountQuery(text: string): Statement {
  const sql = new Sql();
  const s = substringConditions(sql, text);
  return {
    text: `WITH c AS MATERIALIZED (${s.chunks}) SELECT x.total AS n FROM (${s.counts}) x`,
    params: sql.params,
  };
}

/**
 * The values of a `search` alone's page statement, each a one-row subquery (an InitPlan, computed once), as
 * pagingValue's are: the statement is prepared (countAndPagePrepared), and planning it took 1.2–1.5 ms at 1M (each of
 * its six references to `libraries` weighs 25 indexes), more than running it for a rare substring. Hidden, the
 * values give custom and generic plans one cost, and PostgreSQL keeps the generic plan; the branches (tokens or
 * pairs, bitmaps or one scan, walk or collection) are one-time filters chosen when it runs.
 */
interface SubstringValues {
  /** The LIKE pattern `%…%` of the folded text (substringPattern). */
  pattern: string;
  /** The folded text. */
  folded: string;
  /**
   * The bitmaps that most likely hold the substring's matches: library_search_tokens, or one of
   * shortSubstringTable's (a different statement text for each).
   */
  table: 'library_search_tokens' | 'library_search_grams' | 'library_search_triples';
  /**
   * Whether that table holds the substring's matches (bookcase_search_tokenized, bookcase_search_gram or
   * bookcase_search_tripled on the folded text).
   */
  tokenized: string;
  /**
   * Whether a small part is collected from the bits of `c` rather than through a trigram index (a gram of one or
   * two characters: no trigram index narrows it), and the page is always read by parts (one scan would read every
   * approved row).
   */
  collectsBits: boolean;
  /** Whether the folded text has a space: its matches are then in the pairs' rows, else in the tokens'. */
  spaced: string;
  /**
   * For a checked substring (checkedSubstringTable), its keys (an array, checkedKeys) and whether it has any: `table`
   * then gives candidates, checked one by one (checkedMatches), never the counts.
   */
  checked?: { keys: string; keyed: string };
  lim: string;
  off: string;
}

function substringValues(sql: Sql, text: string, limit: number, offset: number): SubstringValues {
  const { folded, pattern } = substringPattern(`${sql.param(text)}::text`);
  const checked = checkedSubstringTable(text);
  if (checked) {
    // Keys of the folded text's InitPlan: with the text a constant, a custom plan estimated generate_series' rows
    // below the generic plan's and PostgreSQL never kept the generic one.
    const keys = `(SELECT ${checkedKeys(checked, `(SELECT ${folded})`)})`;
    return {
      pattern: `(SELECT ${pattern})`,
      folded: `(SELECT ${folded})`,
      table: checked,
      tokenized: 'false',
      collectsBits: false,
      spaced: 'false',
      checked: { keys, keyed: `(cardinality(${keys}) > 0)` },
      lim: `(SELECT ${sql.param(limit)}::int)`,
      off: `(SELECT ${sql.param(offset)}::int)`,
    };
  }
  const table = shortSubstringTable(text) ?? 'library_search_tokens';
  const holds = {
    library_search_tokens: 'bookcase_search_tokenized',
    library_search_grams: 'bookcase_search_gram',
    library_search_triples: 'bookcase_search_tripled',
  }[table];
  return {
    pattern: `(SELECT ${pattern})`,
    folded: `(SELECT ${folded})`,
    table,
    tokenized: `(SELECT ${holds}(${folded}))`,
    collectsBits: table === 'library_search_grams',
    spaced: `(SELECT strpos(${folded}, ' ') > 0)`,
    lim: `(SELECT ${sql.param(limit)}::int)`,
    off: `(SELECT ${sql.param(offset)}::int)`,
  };
}

/**
 * The rows of library_search_tokens whose token (or pair, for a substring with a space) holds the substring, with
 * `columns`, when the tokens hold its matches and `gate` holds. Two branches, so each finds its partial trigram index
 * (the index's predicate must follow from the statement's when it is planned, before the text is known).
 */
function substringTokenRows(v: SubstringValues, columns: string, gate: string): string {
  // One gram's rows; the windows of three tokens through their trigram index (migration 1767800000000).
  if (v.table === 'library_search_grams')
    return `SELECT ${columns} FROM library_search_grams s
             WHERE ${gate} AND ${v.tokenized} AND s.token = ${v.folded}`;
  if (v.table === 'library_search_triples')
    return `SELECT ${columns} FROM library_search_triples s
             WHERE ${gate} AND ${v.tokenized} AND s.token LIKE ${v.pattern}`;
  return `SELECT ${columns} FROM library_search_tokens s
             WHERE ${gate} AND ${v.tokenized} AND NOT ${v.spaced} AND strpos(s.token, ' ') = 0
               AND s.token LIKE ${v.pattern}
             UNION ALL
             SELECT ${columns} FROM library_search_tokens s
             WHERE ${gate} AND ${v.tokenized} AND ${v.spaced} AND strpos(s.token, ' ') > 0
               AND s.token LIKE ${v.pattern}`;
}

/**
 * A page of a `search` alone: the libraries whose folded name holds the substring first, then the others, newest
 * first within each (decisions: "name matches first"; the order of addListConditions' rank). The counts come from
 * the token bitmaps (`c`, `b`: the OR of the rows of the tokens that hold the substring), and the page is read one of
 * two ways, chosen when the statement runs by the exact total (`b.parts`):
 *
 * - few matches (or a substring the tokens do not hold: soleSubstring's guess was wrong, and the scan counts): every
 *   match is found in one scan of libraries_search_text_trgm_idx (a heap row each) and ranked, its name matches from
 *   the name's trigram index as one hashed set (`m`). The parts collected the same rows apart and folded each match's
 *   name again: a 4-digit postal fragment (~1,000 matches at 1M) cost twice as much (bench/README, session 9,
 *   issue-22p);
 * - many: each part reads at most its first `offset + limit` rows, as textPageQuery's do, in one of two ways chosen
 *   by its exact size: walk the approved list newest first (index entries only), keeping the entries whose bit is
 *   set in the part's chunks laid end to end (`named`, `rest`; bookcase_bit_cat: bit `id` is library `id`), or
 *   collect the part through a trigram index (the name's, libraries_approved_name_trgm_idx, for the name part) and
 *   sort it.
 *
 * "Few" is what the parts would collect anyway: `SUBSTRING_WALK_COST_RATIO · total² < (offset + limit) · approved`
 * (neither part is then walked).
 */
function substringPageQuery(
  text: string,
  limit: number,
  offset: number,
  columns: (sql: Sql) => string,
  withTotal: boolean,
  ratios: SubstringRatios = { bitmaps: SUBSTRING_WALK_COST_RATIO, walk: SUBSTRING_WALK_COST_RATIO },
): Statement {
  const sql = new Sql();
  const selected = columns(sql);
  const v = substringValues(sql, text, limit, offset);
  const { lim, off } = v;
  const reach = `(${off} + ${lim})`;
  // Per chunk, the OR of the bitmaps of every token that holds the substring (no row unless tokenized), and its
  // exact counts; `parts`: whether the page is read by parts (many matches) rather than in one scan.
  const chunks = v.checked
    ? checkedChunks(v.table as 'library_search_grams' | 'library_search_triples', v.checked.keys)
    : `SELECT r.chunk, bit_or(r.approved) AS approved, bit_or(r.in_name) AS in_name FROM (
           ${substringTokenRows(v, 's.chunk, s.approved, s.in_name', 'true')}) r GROUP BY r.chunk`;
  // A gram is always read by parts: its one scan would read every approved row.
  const many = v.collectsBits
    ? 'true'
    : `${ratios.bitmaps} * b.total::float8 * b.total >= ${reach}::float8 * b.approved`;
  // A checked substring's candidates decide between them and the one scan (checkedGate); when the total is known
  // (the memo's page ids: 1,000 matches or more), its page is read by parts whatever their number (a part is walked
  // when its candidates are many, and then checks about as many as it keeps), each row checked as it comes.
  const checkedRatio =
    ratios.checked ??
    CHECKED_CANDIDATE_RATIO[v.table as 'library_search_grams' | 'library_search_triples'];
  const checkedParts = v.checked && !withTotal;
  const bitCounts = `SELECT b.*, ${
    checkedParts
      ? `${v.checked!.keyed}${ratios.checked === undefined ? '' : ` AND ${ratios.checked} * b.total <= b.approved`}`
      : `b.tokenized
             AND ${many}`
  } AS parts FROM (
           SELECT coalesce(sum(bit_count(c.approved)), 0)::int AS total,
             coalesce(sum(bit_count(c.in_name)), 0)::int AS in_name,
             (SELECT coalesce(sum(approved), 0) FROM library_country_counts)::int AS approved,
             ${v.tokenized} AS tokenized
           FROM c OFFSET 0) b`;
  // Every match in one scan, unless the page is read by parts. `named` (the rank) from the name's trigram index, one
  // hashed set: folding each match's name again (bookcase_unaccent) cost as much as the scan itself (at 1M, a postal
  // fragment's ~1,000 matches: 2.4 ms of 4.8).
  const scan = (gate: string) => `SELECT l.id, l.created_at, l.id IN (
             SELECT n.id FROM libraries n WHERE n.status = 'approved' AND ${nameLike('n', v.pattern)}) AS named
           FROM libraries l
           WHERE ${gate} AND l.status = 'approved' AND l.search_text LIKE ${v.pattern}`;
  // A checked substring: its candidates checked one by one, or the scan, each match's name folded (the name's
  // trigram index does not narrow what the text's cannot: at 1M, `e am` read ~200,000 names for the hashed set).
  const checkedGate =
    v.checked && `(SELECT ${v.checked.keyed} AND ${checkedRatio} * b.total <= b.approved FROM b)`;
  const scanned = checkedGate
    ? `${checkedMatches(v.pattern, `${checkedGate} AND NOT (SELECT b.parts FROM b)`)}
         UNION ALL
         SELECT l.id, l.created_at, ${nameLike('l', v.pattern)} FROM libraries l
         WHERE NOT ${checkedGate} AND NOT (SELECT b.parts FROM b) AND l.status = 'approved'
           AND l.search_text LIKE ${v.pattern}`
    : scan('NOT (SELECT b.parts FROM b)');
  // From the bitmaps; a substring the tokens do not hold is counted from the scan. A checked substring read by parts:
  // its candidates (what decides how each part is read; the total is not read).
  const bitmapped = checkedParts ? 'b.parts' : 'b.tokenized';
  const counts = `SELECT
           CASE WHEN ${bitmapped} THEN b.total ELSE (SELECT count(*) FROM m)::int END AS total,
           CASE WHEN ${bitmapped} THEN b.in_name ELSE (SELECT count(*) FILTER (WHERE m.named) FROM m)::int END
             AS in_name,
           b.approved, b.parts FROM b`;
  // The entry's bit in a part's bitmap (CASE: get_bit fails past the end, and AND does not fix the order of its
  // tests).
  const has = (bitmap: 'named' | 'rest') =>
    `CASE WHEN w.id < bit_length((SELECT b.bits FROM ${bitmap} b))
      THEN get_bit((SELECT b.bits FROM ${bitmap} b), w.id) = 1 ELSE false END`;
  const named = (alias: string) => nameLike(alias, v.pattern);
  const inText = (alias: string) => `${alias}.search_text LIKE ${v.pattern}`;
  // The LIMIT of no effect keeps the filters above the ordered index scan (see textPageQuery).
  const newest = (cols: string) => `(SELECT ${cols} FROM libraries l WHERE l.status = 'approved'
             ORDER BY l.created_at DESC, l.id DESC LIMIT (SELECT ${Number.MAX_SAFE_INTEGER}::bigint)) w`;
  const part = (
    n: number,
    size: string,
    needed: string,
    bits: string,
    collected: string,
    chunkBits: string,
    check?: (alias: string) => string,
  ) => {
    const walk = `(${ratios.walk} * (${size})::float8 * (${size}) >= ${reach}::float8 * t.approved)`;
    if (check) {
      // A checked substring's part: the candidates' entries walked or their ids collected as for a gram, each kept
      // when its library passes `check` (a primary-key probe; a scalar subquery: as EXISTS, PostgreSQL hashed every
      // match of the text's trigram index first).
      return `(SELECT ${n} AS part, w.id, w.created_at FROM ${newest('l.id, l.created_at')}
           WHERE t.parts AND ${walk} AND ${needed}
             AND CASE WHEN ${bits} THEN (SELECT ${check('l')} FROM libraries l WHERE l.id = w.id) ELSE false END
           ORDER BY w.created_at DESC, w.id DESC LIMIT ${reach})
         UNION ALL
         (SELECT ${n}, c.id, c.created_at FROM (
             SELECT l.id, l.created_at FROM (${bitIds(chunkBits)}) b(id)
             CROSS JOIN LATERAL (SELECT l.id, l.created_at FROM libraries l WHERE l.id = b.id AND ${check('l')}
               OFFSET 0) l
             WHERE t.parts AND ${needed} AND NOT ${walk}
             OFFSET 0) c
           ORDER BY c.created_at DESC, c.id DESC LIMIT ${reach})`;
    }
    // A small part of a substring of one or two characters (collectsBits): its ids from the part's bits in `c`,
    // each a probe of the primary key (a scalar subquery: as a join or `IN`, PostgreSQL read every approved id and
    // tested it against the set). No trigram index narrows one or two characters.
    const collectedRows = v.collectsBits
      ? `SELECT b.id, (SELECT l.created_at FROM libraries l WHERE l.id = b.id)
             FROM (${bitIds(chunkBits)}) b(id) WHERE t.parts AND ${needed} AND NOT ${walk}`
      : `SELECT l.id, l.created_at FROM libraries l
             WHERE t.parts AND l.status = 'approved' AND ${collected} AND ${needed} AND NOT ${walk}`;
    return `(SELECT ${n} AS part, w.id, w.created_at FROM ${newest('l.id, l.created_at')}
           WHERE t.parts AND ${walk} AND ${needed} AND ${bits}
           ORDER BY w.created_at DESC, w.id DESC LIMIT ${reach})
         UNION ALL
         (SELECT ${n}, c.id, c.created_at FROM (
             ${collectedRows}
             OFFSET 0) c
           ORDER BY c.created_at DESC, c.id DESC LIMIT ${reach})`;
  };
  // A checked substring: its name candidates whose name holds it, then its candidates whose text holds it and name
  // does not (a name candidate's name may not).
  // The others only when the name part falls short of the page (they may all be name matches: the walk would read
  // every entry).
  const checkedParts_ = [
    '(SELECT * FROM p1)',
    part(
      2,
      't.total',
      `t.total > 0 AND (SELECT count(*) FROM p1) < ${reach}`,
      has('rest'),
      '',
      'c.approved',
      (l) => `${inText(l)} AND NOT ${named(l)}`,
    ),
  ];
  const parts = [
    ...(checkedParts
      ? checkedParts_
      : [
          part(1, 't.in_name', 't.in_name > 0', has('named'), named('l'), 'c.in_name'),
          part(
            2,
            't.total - t.in_name',
            `t.total > t.in_name AND t.in_name < ${reach}`,
            has('rest'),
            `${inText('l')} AND NOT ${named('l')}`,
            'c.approved & ~c.in_name',
          ),
        ]),
    // The one scan's matches, ranked.
    `(SELECT CASE WHEN m.named THEN 1 ELSE 2 END, m.id, m.created_at FROM m
           ORDER BY m.named DESC, m.created_at DESC, m.id DESC LIMIT ${reach})`,
  ].join('\n         UNION ALL\n         ');
  // A part's chunks end to end, built only when that part is walked (a CTE runs when first read): the name
  // matches, and the others (a name token is a token of the text, so `in_name` lies within `approved`).
  const ends = (
    bits: string,
  ) => `SELECT bookcase_bit_cat(coalesce(${bits}, B'0'::bit(8192)) ORDER BY g.chunk) AS bits
       FROM generate_series(0, (SELECT max(c.chunk) FROM c)) g(chunk) LEFT JOIN c ON c.chunk = g.chunk`;
  const page = `SELECT ${selected} FROM (
         SELECT * FROM (
           ${parts}) u
         ORDER BY u.part, u.created_at DESC, u.id DESC LIMIT ${lim} OFFSET ${off}) m
       JOIN libraries l ON l.id = m.id ORDER BY m.part, m.created_at DESC, m.id DESC`;
  return {
    text: `WITH c AS MATERIALIZED (${chunks}), b AS MATERIALIZED (${bitCounts}), m AS MATERIALIZED (${scanned}),
         t AS MATERIALIZED (${counts}),
         named AS MATERIALIZED (${ends('c.in_name')}), rest AS MATERIALIZED (${ends(checkedParts ? 'c.approved' : 'c.approved & ~c.in_name')})${
           checkedParts
             ? `,
         p1 AS MATERIALIZED (SELECT p.* FROM t CROSS JOIN LATERAL (
           ${part(1, 't.in_name', 't.in_name > 0', has('named'), '', 'c.in_name', named)}) p)`
             : ''
         }
       ${withTotal ? `SELECT t.total, p.* FROM t LEFT JOIN LATERAL (${page}) p ON true` : `SELECT p.* FROM t CROSS JOIN LATERAL (${page}) p`}`,
    params: sql.params,
  };
}

/**
 * What decides how the page of a `search` alone is read: by parts when `bitmaps · total² ≥ (offset + limit) ·
 * approved` (else in one scan), and then each part walked when `walk · size² ≥ (offset + limit) · approved` (else
 * collected). SUBSTRING_WALK_COST_RATIO for both unless a test forces a way (0: never; a large one: always).
 */
export interface SubstringRatios {
  bitmaps: number;
  walk: number;
  /**
   * A checked substring's candidates are checked when `checked · candidates ≤ approved` (else the one scan);
   * CHECKED_CANDIDATE_RATIO unless given, and then for its page alone too (read by parts by default).
   */
  checked?: number;
}

/**
 * countAndPageQuery's statement for a `search` alone, with other ratios than the list's (tests force each way of
 * reading it with them); without `withTotal`, its page alone (pageQuery's). Null for other lists.
 */
export function substringCountAndPageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
  ratios: SubstringRatios,
  withTotal = true,
): Statement | null {
  const substring = soleSubstring(search);
  if (!substring) return null;
  const listColumns = (sql: Sql) => [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  return substringPageQuery(substring, limit, offset, listColumns, withTotal, ratios);
}

/**
 * The ids a memoised `search` page after the first is read as, as textPageWindow's for `q`: every id before its end,
 * up to the next power of two of `offset + limit` (at most TEXT_PAGE_WINDOW_MAX); null for the first page, past that
 * and for other lists. Each page statement ORs the bitmaps of every token that holds the substring again before it
 * walks or collects its parts from the top (at 1M `bücher`: ~1,250 token rows, 20–35 ms of pg CPU), so a window costs
 * about what one of its pages costs, and pages 2–20 take four statements (windows of 64, 128, 256 and 512 ids) per
 * LIST_CACHE_TTL_MS instead of one each.
 */
export function substringPageWindow(
  search: LibrarySearch,
  limit: number,
  offset: number,
): number | null {
  if (offset === 0 || !soleSubstring(search)) return null;
  const window = 2 ** Math.ceil(Math.log2(offset + limit));
  return window <= TEXT_PAGE_WINDOW_MAX ? window : null;
}

/**
 * The ids whose bits are set in `bits` (an expression of the chunk rows `c`): each chunk's bits as text, split at
 * its ones; a one ends each segment but the last, at the segments' running length. Linear in the chunks and the
 * ids, not in the bits (a chunk's 8,192). `columns` are more of each id's (of `c`, and `p.pos`, its bit).
 */
function bitIds(bits: string, columns = ''): string {
  return `SELECT (c.chunk << 13) + p.pos${columns} FROM c CROSS JOIN LATERAL (
             SELECT (sum(char_length(u.seg) + 1) OVER (ORDER BY u.n))::int - 1 AS pos, u.n,
               count(*) OVER () AS segments
             FROM unnest(string_to_array((${bits})::text, '1')) WITH ORDINALITY u(seg, n)) p
           WHERE bit_count(${bits}) > 0 AND p.n < p.segments`;
}

/** What decides how a `q` page's parts are read: WALK_COST_RATIO and BIT_WALK_FROM unless a test forces a way. */
export interface TextWalk {
  ratio: number;
  bitsFrom: number;
}

/**
 * countAndPageQuery's statement for a list ordered by text, with other thresholds than the list's: tests force each
 * way of reading a part with them (a ratio of 0 collects; a large one walks, testing bits from `bitsFrom` entries on).
 * Null for other lists.
 */
export function textCountAndPageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
  walk: TextWalk,
): Statement | null {
  const words = orderedTextWords(search);
  if (!words) return null;
  const listColumns = (sql: Sql) => [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  return textPageQuery(search, words, limit, offset, listColumns, true, walk);
}

/** A substring filter on a place column, and the aggregates kept for it (migration 1765550000000). */
export interface Place {
  column: 'city' | 'postal_code';
  /** What the filter matches, of the row `alias` (the city case-insensitively); `text` is already lower-cased. */
  matched: (alias: string) => string;
  lower: boolean;
  /** Approved libraries (and with a primary photo) per distinct value and country. */
  table: string;
}

const PLACES = {
  city: {
    column: 'city',
    matched: (alias: string) => `lower(${alias}.city)`,
    lower: true,
    table: 'library_city_counts',
  },
  postalCode: {
    column: 'postal_code',
    matched: (alias: string) => `${alias}.postal_code`,
    lower: false,
    table: 'library_postal_code_counts',
  },
} satisfies Record<string, Place>;

/** The substring condition of `place` on the row `alias`; `escaped` is the parameter of the LIKE-escaped text. */
function placeMatches(place: Place, alias: string, escaped: string): string {
  const text = place.lower ? `lower(${escaped})` : escaped;
  return `${place.matched(alias)} LIKE '%' || ${text} || '%'`;
}

/**
 * placeMatches in a prepared statement whose text is hidden (placeValue): the pattern is a one-row subquery, built
 * once. As an expression of the hidden text it was built again for every row tested (at 1M, 206,797 postal codes
 * tested in 52–55 ms instead of 68–87, cities 90 instead of 154).
 */
function hoistedMatches(place: Place, alias: string, escaped: string): string {
  const text = place.lower ? `lower(${escaped})` : escaped;
  return `${place.matched(alias)} LIKE (SELECT '%' || ${text} || '%')`;
}

/**
 * `has_photo` (HAS_PHOTO) of the approved library whose id is `id`, without its row: whether it lacks a primary photo
 * is a probe of libraries_approved_without_photo_idx (migration 1767100000000), a community photo one of
 * library_photos. The place scans read index entries that hold the places but not `photo_key`, so HAS_PHOTO cost a
 * heap row per entry that passed the place (at 1M `has_photo=true&city=Køben&postal_code=80`: 10,843 heap pages for
 * the count). A scalar subquery, not EXISTS: PostgreSQL never turns it into a join or a hashed subplan reading every
 * library without a photo. Only for approved libraries (the partial index holds no other).
 */
function placePhoto(id: string, hasPhoto: boolean): string {
  const primary = `(SELECT n.id FROM libraries n
      WHERE n.id = ${id} AND n.status = 'approved' AND n.photo_key IS NULL) IS NULL`;
  const community = `EXISTS (SELECT 1 FROM library_photos p WHERE p.library_id = ${id} AND p.status = 'approved')`;
  return hasPhoto ? `(${primary} OR ${community})` : `(NOT ${primary} AND NOT ${community})`;
}

/**
 * `has_photo` of the approved libraries `l` that a place filter's page reads by value (or by pair) from a place's
 * btree. has_photo=false is `photo_key IS NULL` on the row, so the read takes the place's partial index of libraries
 * without a primary photo (migration 1768200000000) and meets only those, one probe of library_photos each; with
 * placePhoto it read every library of the value and probed libraries_approved_without_photo_idx for each, four in
 * five of which have a photo.
 */
function ofValuePhoto(hasPhoto: boolean): string {
  return hasPhoto ? placePhoto('l.id', true) : WITHOUT_ANY_PHOTO;
}

/**
 * The place filter whose count and page come from its aggregates: exactly one of `city` and `postal_code`, with
 * `country` and `has_photo` or alone. With text or proximity (or both places) the list counts libraries as before.
 */
export function placeFilter(search: LibrarySearch): { place: Place; text: string } | null {
  if (search.q || search.search || search.near || (search.city && search.postalCode)) return null;
  if (search.city) return { place: PLACES.city, text: search.city };
  if (search.postalCode) return { place: PLACES.postalCode, text: search.postalCode };
  return null;
}

/**
 * Whether countAndPageQuery's statement is prepared: worthPreparing's lists, and one place filter
 * (placeCountAndPageQuery: one plan for every text, its values one-row subqueries), and both places
 * (bothPlacesCountAndPageQuery, the same way: planned on every request it spent 1–5 ms planning at 1M). Planning was about a third of
 * a place filter's PostgreSQL time at 1M (0.5–1 ms of ~30 subqueries and both page plans, for 0.5–3 ms of execution).
 * Its page alone (pageQuery, a page past the end) stays unprepared: a plain substring condition on `libraries`,
 * whose best plan depends on the text. A `search` alone (substringPageQuery) too: its values are one-row subqueries
 * and its branches chosen when it runs, so one generic plan serves every text (planning it took 1.2–1.5 ms at 1M).
 */
export function countAndPagePrepared(search: LibrarySearch): boolean {
  return (
    worthPreparing(search) ||
    placeFilter(search) !== null ||
    bothPlaces(search) ||
    soleSubstring(search) !== null
  );
}

/**
 * How PreparedReader reads the statements of a list (countAndPageQuery, pageQuery, pageIdsQuery): unprepared, or
 * prepared and run on PostgreSQL's generic plan from the first execution on a connection. Each prepared list statement
 * is written so that its plan does not depend on its values (one-row subqueries, branches chosen when it runs:
 * pagingValue, placeValue, runsArray…), so the custom plans of its first five executions per connection only cost
 * planning: 1–5 ms for a place list at 1M, about 24 list shapes × 10 pooled connections × 5 after every start.
 */
export function listReadPlan(search: LibrarySearch): false | 'generic' {
  return countAndPagePrepared(search) && 'generic';
}

/**
 * A value of a place filter's statement; when the statement is `prepared`, a one-row subquery of `type`, as
 * pagingValue's values are. A custom plan that saw the text folded `char_length(text) <= 2` to one of placeCount's
 * two sums and estimated the patterns, so each cost about half the generic plan, which PostgreSQL then never chose
 * (`city=Minn&has_photo=true`: 41k against 83k); hidden, custom and generic plans are one plan, which PostgreSQL
 * keeps. The plan is the same for every text (the branches are one-time filters chosen when it runs).
 */
function placeValue(sql: Sql, value: unknown, type: string, prepared: boolean): string {
  const param = sql.param(value);
  return prepared ? `(SELECT ${param}::${type})` : param;
}

/**
 * The rows of `place`'s table (`alias`, with `columns`) whose value contains the text (`escaped`), in `country` if
 * not null: for placeCount's sums of three characters or more. Prepared, the text is hidden from the plan
 * (placeValue), and with `country` PostgreSQL read every value of the country from the country index whatever the
 * text (`country=DE&postal_code=601`: ~70,000 entries for 116 values); OFFSET 0 keeps the country out of the trigram
 * index's scan.
 */
function matching(
  place: Place,
  alias: string,
  escaped: string,
  country: string | null,
  prepared: boolean,
  column: string,
): string {
  const matches = (prepared ? hoistedMatches : placeMatches)(place, alias, escaped);
  if (!prepared || !country)
    return `${place.table} ${alias}
              WHERE ${matches}${country ? ` AND ${alias}.country = ${country}` : ''}`;
  return `(SELECT ${alias}.${column}, ${alias}.country FROM ${place.table} ${alias} WHERE ${matches} OFFSET 0) ${alias}
              WHERE ${alias}.country = ${country}`;
}

/**
 * The matching values (and countries) of a place filter's page by value (placeCountAndPageQuery, prepared: the text
 * is hidden from the plan). The text's length chooses at run time (one-time filters): one or two characters, which
 * no trigram narrows, read the values that contain them from their short grams' index (library_*_counts_grams_idx,
 * migration 1768100000001), in `country` or else in every country whose libraries have that gram
 * (library_place_grams); a longer text reads the trigram index. Each scan behind OFFSET 0 so the other conditions
 * cannot draw it to another index. With a country the trigram index read every value of the country (at 1M
 * `country=GB&postal_code=10` all 68,976 GB postal codes for 113 libraries: 17–22 → 1.3–1.6 ms of backend CPU);
 * without one it read and rechecked every value (at 100k `postal_code=55&page=18`: 38,070 values for 647, 58 ms).
 * `withoutPhoto` (has_photo=false) keeps only the values with an approved library without a
 * primary photo (`approved > with_photo`, from the same index entries): every library of the others has one, so none
 * matches, and each value cost a probe of the place's index (at 1M `country=NL&has_photo=false&postal_code=100`:
 * 1,955 values, 10–14 ms).
 */
function valuesOf(
  place: Place,
  escaped: string,
  country: string | null,
  folded: string,
  withoutPhoto = false,
): string {
  const column = `v.${place.column}`;
  const matches = hoistedMatches(place, 'v', escaped);
  const some = withoutPhoto ? 'v.approved > v.with_photo' : 'v.approved > 0';
  const kept = `${column}, v.country, v.approved${withoutPhoto ? ', v.with_photo' : ''}`;
  const grams = `bookcase_short_grams(v.country, ${place.matched('v')})`;
  const short = country
    ? `${grams} @> ARRAY[${country} || ${folded}]`
    : `${grams} && (SELECT array_agg(g.country || ${folded}) FROM library_place_grams g
            WHERE g.gram = '${place.column}:' || ${folded})`;
  const inCountry = country ? ` AND v.country = ${country}` : '';
  return `SELECT v.${place.column}, v.country FROM (SELECT ${kept} FROM ${place.table} v
        WHERE char_length(${folded}) <= 2
          AND ${short} OFFSET 0) v
      WHERE ${matches}${inCountry} AND ${some}
    UNION ALL
    SELECT v.${place.column}, v.country FROM (SELECT ${kept} FROM ${place.table} v
        WHERE char_length(${folded}) > 2 AND ${matches} OFFSET 0) v
      WHERE ${country ? `v.country = ${country} AND ` : ''}${some}`;
}

/**
 * The exact count of a place filter: the sum over the distinct values that contain the text (trigram index of the
 * place's table), or, for one or two characters, which no trigram index can narrow and which may match a large
 * share of the values (`postal_code=10`: 25,246 of 206,797 at 1M, 36 ms to scan), the one row per country of
 * library_place_grams. The text's length is taken after lower-casing, as the grams were.
 */
function placeCount(
  sql: Sql,
  search: LibrarySearch,
  { place, text }: { place: Place; text: string },
  prepared = false,
): string {
  const raw = placeValue(sql, text, 'text', prepared);
  const escaped = placeValue(sql, likeEscape(text), 'text', prepared);
  const country = search.country
    ? placeValue(sql, search.country.toUpperCase(), 'char(2)', prepared)
    : null;
  const inCountry = country ? ` AND c.country = ${country}` : '';
  const folded = place.lower ? `lower(${raw})` : raw;
  return photoAwareCount(
    search.hasPhoto,
    (column) => `(CASE WHEN char_length(${folded}) <= 2
        THEN (SELECT coalesce(sum(c.${column}), 0) FROM library_place_grams c
              WHERE c.gram = '${place.column}:' || ${folded}${inCountry})
        ELSE (SELECT coalesce(sum(c.${column}), 0) FROM ${matching(place, 'c', escaped, country, prepared, column)}) END)`,
    ` AND ${(prepared ? hoistedMatches : placeMatches)(place, 'l', escaped)}${country ? ` AND l.country = ${country}` : ''}`,
  );
}

/**
 * From this many index entries walked per page on (or, if more, about as many rows as reading the newest of each
 * matching value reads), a place filter's page reads the newest libraries of each matching value instead: a walk of
 * the list newest first reads about (offset + limit) × approved ÷ total entries (index-only,
 * libraries_approved_created_places_idx, ~4 µs each at 1M under load), a rare value's page would walk most of the
 * index. Each value gives up to `offset + limit` rows, which for small values (postal codes) is about the total:
 * with the fixed 5,000 alone a deep page of `postal_code=35` (24,951 matches, page 4 of 50) read 49,865 buffers that
 * way (210 ms at 1M), where the walk reads 7,200 index entries (5,418 buffers, 7–11 ms).
 */
export const PLACE_WALK_ENTRIES = 5000;

/** PLACE_WALK_ENTRIES of a place filter with `country` (placeCountAndPageQuery). */
export const PLACE_WALK_ENTRIES_IN_COUNTRY = 1500;

/**
 * PLACE_WALK_ENTRIES of a city filter (placeCountAndPageQuery). A city is large (at 1M the seed's ~17,000 libraries
 * each), so its page by value reads one probe and at most `offset + limit` entries per matching city, which the
 * values' estimate prices near nothing, and the fixed 5,000 decided: a walk of up to 5,000 entries (1.4–1.7 CPU-ms),
 * where reading by value cost 0.25–0.45. Over the 508 city requests of 2,000 list-filters (seed 7, 100k), each forced
 * both ways: walks 542 ms in all, by value 144, as chosen with 5,000 247, with 1,000 173, with 300 182 (by value
 * 172 in that run). At 1M the city requests of the replay (seed 7, 533): 0.95 → 0.53 backend CPU-ms on average.
 */
export const PLACE_WALK_ENTRIES_CITY = 300;

/** Approved libraries in all, the list's size (library_country_counts). */
const APPROVED_ALL = '(SELECT sum(approved) FROM library_country_counts)';

/**
 * The approved libraries newest first with their places, as a page of a place filter walks them (`w`), in `country`
 * if not null. The LIMIT of no effect is an InitPlan, whose value the planner cannot know: it then plans for the first
 * tenth of the rows, a walk of libraries_approved_created_places_idx in order, not a parallel read of a place's whole
 * index and a sort (which it preferred under has_photo: `city=London&has_photo=true` 0.9–1.6 s). With `country` the
 * walk reads that country's libraries alone, index-only (libraries_approved_country_created_places_idx, migration
 * 1768100000000); it walked every library and dropped the other countries', so few walks were cheap enough (at 1M
 * `country=NL&has_photo=true&postal_code=55&page_size=50`, 1,087 of NL's 33,693: ~1,550 entries against ~46,000, so
 * it read NL's values instead; 15–22 → 2.0 ms).
 */
function walkedPlaces(country: string | null, places: string): string {
  return `(SELECT l.id, l.created_at, l.country, ${places} FROM libraries l
      WHERE l.status = 'approved'${country ? ` AND l.country = ${country}` : ''} ORDER BY l.created_at DESC, l.id DESC
      LIMIT (SELECT ${Number.MAX_SAFE_INTEGER}::bigint)) w`;
}

/** How many entries walkedPlaces walks in all: the approved libraries of `country`, or of every country. */
function walkedApproved(country: string | null): string {
  return country
    ? `coalesce((SELECT k.approved FROM library_country_counts k WHERE k.country = ${country}), 0)`
    : APPROVED_ALL;
}

/**
 * The count and one page of a place filter (placeFilter) in one statement, like countAndPageQuery. The count comes
 * from the aggregates (placeCount); the page, newest first, by one of two plans chosen by PostgreSQL at run time
 * (one-time filters on the total):
 *
 * - dense matches: walk libraries_approved_created_places_idx newest first, testing the place on the index entry,
 *   and stop after the page;
 * - sparse matches: for each matching value (and country), its newest `offset + limit` libraries from the place's
 *   btree index, merged.
 *
 * `walk` (PLACE_WALK_ENTRIES, and the values' estimate above it) is a parameter for tests, which force either plan
 * with it.
 */
export function placeCountAndPageQuery(
  search: LibrarySearch,
  filter: { place: Place; text: string },
  userId: number | null,
  limit: number,
  offset: number,
  walk: { entries: number; upToTotal: boolean } = { entries: PLACE_WALK_ENTRIES, upToTotal: true },
): Statement {
  const { place } = filter;
  const sql = new Sql();
  // Prepared (countAndPagePrepared): every value is a one-row subquery (placeValue).
  const value = (v: unknown, type: string) => placeValue(sql, v, type, true);
  const total = placeCount(sql, search, filter, true);
  // The walk filters the newest approved libraries as an index gives them (OFFSET 0 keeps the order below the
  // filters): with the filters beside it, PostgreSQL estimated a few matches and read them all through the trigram
  // and country indexes and sorted them (`city=Oslo&country=NO`, 11,180 matches: 350–880 ms cold).
  const walking = new Sql(sql.params);
  walking.and(hoistedMatches(place, 'w', value(likeEscape(filter.text), 'text')));
  // has_photo from probes (placePhoto) per entry that passed the place, never from the row.
  if (search.hasPhoto !== undefined) walking.and(placePhoto('w.id', search.hasPhoto));
  const escaped = value(likeEscape(filter.text), 'text');
  const country = search.country ? value(search.country.toUpperCase(), 'char(2)') : null;
  const walked = walkedPlaces(country, `l.${place.column}`);
  // The text's length chooses how valuesOf reads the values.
  const raw = value(filter.text, 'text');
  const folded = place.lower ? `lower(${raw})` : raw;
  const ofValue = new Sql(sql.params);
  ofValue.and(`l.status = 'approved'`);
  ofValue.and(`l.${place.column} = v.${place.column}`);
  ofValue.and(`l.country = v.country`);
  if (search.hasPhoto !== undefined) ofValue.and(ofValuePhoto(search.hasPhoto));
  const columns = [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  const limitParam = value(limit, 'int');
  const offsetParam = value(offset, 'int');
  const wanted = `least(${limitParam}::int, greatest(t.total - ${offsetParam}::int, 0))`;
  const approved = APPROVED_ALL;
  // What reading the newest of each value costs, about: each value gives up to `offset + limit` rows, so the total
  // when values are small (postal codes: ~4 libraries each at 1M), less when they are large (the seed's cities); the
  // mean size of a value from the planner's row count of the place's table (a choice of plan, never of rows). With
  // has_photo each of those rows is a heap fetch, where the walk fetches only the entries that pass the place:
  // counted 4 entries each (at 1M, `postal_code=35&has_photo=true` page 10 of 50: 64,167 buffers and 480–950 ms
  // by value, 18,834 and 29–55 ms walked; `postal_code=101&has_photo=false` page 1: 19,649 and 170–300 ms by value,
  // 5,579 and 13–45 ms walked).
  const reach = `(${offsetParam}::int + ${limitParam}::int)`;
  const values = `greatest((SELECT c.reltuples FROM pg_class c WHERE c.oid = '${place.table}'::regclass), 1)`;
  const perRow = search.hasPhoto === undefined ? 1 : 4;
  // With a country the values are read from indexes that narrow them to the matching ones (valuesOf), at about a
  // tenth of a millisecond per value: a walk of more than PLACE_WALK_ENTRIES_IN_COUNTRY entries (~0.7 µs each) cost
  // more (at 1M `country=AU&postal_code=79&page_size=50`: 4,740 entries walked, 3.1–3.8 ms; by value 1.0–1.8).
  const floor = Math.min(
    walk.entries,
    country ? PLACE_WALK_ENTRIES_IN_COUNTRY : walk.entries,
    place === PLACES.city ? PLACE_WALK_ENTRIES_CITY : walk.entries,
  );
  const budget = walk.upToTotal
    ? `greatest(${floor}, t.total * least(1, ${reach} * ${values}::float8 / ${approved}) * ${perRow})`
    : `${walk.entries}`;
  const dense = `${reach}::float8 * ${walkedApproved(country)} <= t.total::float8 * ${budget}`;
  return {
    text: `SELECT t.total, p.* FROM (SELECT ${total} AS total OFFSET 0) t
       LEFT JOIN LATERAL (SELECT ${columns} FROM (
         (SELECT w.id, w.created_at FROM ${walked} ${walking.whereClause()} AND ${dense}
          ORDER BY w.created_at DESC, w.id DESC LIMIT ${wanted} OFFSET ${offsetParam})
         UNION ALL
         (SELECT m.id, m.created_at
          FROM (${valuesOf(place, escaped, country, folded, search.hasPhoto === false)}) v
          CROSS JOIN LATERAL (SELECT l.id, l.created_at FROM libraries l ${ofValue.whereClause()}
            ORDER BY l.created_at DESC, l.id DESC LIMIT ${offsetParam}::int + ${wanted}) m
          WHERE NOT ${dense}
          ORDER BY m.created_at DESC, m.id DESC LIMIT ${wanted} OFFSET ${offsetParam})
       ) m JOIN libraries l ON l.id = m.id ORDER BY m.created_at DESC, m.id DESC) p ON true`,
    params: sql.params,
  };
}

/**
 * From this many libraries around a circle on (an upper bound from coarse cells: 1–7 times the circle's own at 1M),
 * its count reads the grid. Counted one by one, a match costs about 0.45 µs of backend CPU (index-only, the sphere's
 * test first: withinRadius); the grid's cost grows with the circle's edge, not its matches (the edge's libraries
 * tested, ~0.55 µs each, and a cell range per run), and its cells cost a second statement and ~0.1 ms of Node.
 * Measured at 1M on the 54 circles with 300 matches or more of 500 proximity-random requests (backend CPU per
 * count, plain / grid; session 8): bounds below 5,000 1.2–1.6 / 1.4–1.7 ms; 5,300–7,300 1.6–2.9 / 1.6–2.1;
 * 9,100–9,600 3.7–4.3 / 2.1–2.7; 11,000–15,000 (4,000–11,600 matches) 4.2–7.6 / 1.1–3.2; from 17,500 3.3–19.8 /
 * 1.3–6.6. With Node's cells added, a threshold of 7,000–9,000 cost least over those circles (15,000: 23 % more).
 * Session 12 (Node's cells ~0.1 ms, the spheroid's band narrower: sphereBounds), 1,539 circles of 2,000 requests,
 * seed 7: 4,000–8,000 cost the same within 1 % (657–663 ms in all), 10,000 3 % more, 12,000 50 % more.
 * It was 15,000 while the grid tested cells wholly outside the circle and ran the cell functions for every edge
 * library, and 3,000 while the spheroid tested every match.
 */
export const GRID_COUNT_FROM = 8_000;

/**
 * The coarse cells around a proximity circle the grid can count (with `country`, `has_photo` or neither), or null
 * when circleCover declines (small circles, poles, the antimeridian) or other filters apply.
 */
function gridCover(search: LibrarySearch): CircleCover | null {
  const near = search.near;
  if (!near || near.radiusMeters === undefined || search.q || search.search) return null;
  if (search.city || search.postalCode) return null;
  return circleCover(near.lat, near.lng, near.radiusMeters);
}

/**
 * The circle's filters on library_map_cells' facets (`c`): the list's country and has_photo, as one-row subqueries
 * (circleCountry).
 */
function cellFacets(sql: Sql, search: LibrarySearch): string {
  return [
    search.country ? ` AND c.country = ${circleCountry(sql, search.country)}` : '',
    search.hasPhoto === undefined
      ? ''
      : ` AND c.has_photo = (SELECT ${sql.param(search.hasPhoto)}::boolean)`,
  ].join('');
}

/**
 * A circle's country in its counts, as a one-row subquery: custom plans that saw it estimated the country's share of
 * the grid's cells and of the box's libraries, and with a country a circle's statements were planned on every
 * request at 1M (runsArray).
 */
function circleCountry(sql: Sql, country: string): string {
  return `(SELECT ${sql.param(country.toUpperCase())}::char(2))`;
}

/**
 * An array of a circle's cell runs as a one-row subquery: a custom plan that saw the array's length (a handful of
 * coarse cells, a hundred edge runs) estimated less than the generic plan (unnest's default of 100 rows), so the
 * statements carrying cells were planned on every request (nearPoint).
 */
function runsArray(sql: Sql, values: number[], type: 'int' | 'float8'): string {
  return `(SELECT ${sql.param(values)}::${type}[])`;
}

/**
 * The libraries of runs of grid cells, with the circle's facets, as a scalar expression. It loops over the runs with
 * an aggregate per run: a join would let the planner sort and merge on the cell expressions instead of one index
 * range per run (measured at 1M: 3 s instead of 10 ms).
 */
function cellSum(sql: Sql, runs: CellRun[], facets: string): string {
  const column = (pick: (row: CellRun) => number) => runsArray(sql, runs.map(pick), 'int');
  return `(SELECT coalesce(sum(k.n), 0)
      FROM unnest(${column((r) => r.level)}, ${column((r) => r.cy)},
                  ${column((r) => r.x0)}, ${column((r) => r.x1)}) AS r(level, cy, x0, x1)
      CROSS JOIN LATERAL (SELECT sum(c.count) AS n FROM library_map_cells c
        WHERE c.level = r.level AND c.cy = r.cy AND c.cx BETWEEN r.x0 AND r.x1${facets}) k)`;
}

/**
 * The count of a circle library by library, or NULL when the coarse cells around it hold `gridFrom` libraries or
 * more: a circle with few libraries costs less counted one by one than through the grid's fixed part (measured at
 * 1M over random circles: 1.3–2.3 pg CPU-ms per count library by library, 2.6–3.3 through the grid; see
 * GRID_COUNT_FROM), and its grid cells need not be computed at all (circleCells: ~0.1 ms of Node per circle). A NULL is then counted by
 * circleGridCountAndPageQuery.
 */
function sparseCircleCount(
  sql: Sql,
  search: LibrarySearch,
  cover: CircleCover,
  gridFrom = GRID_COUNT_FROM,
): string {
  const bound = cellSum(sql, cover.cover, cellFacets(sql, search));
  const plain = new Sql(sql.params);
  addListConditions(plain, { ...search, country: undefined }, 'count');
  if (search.country) plain.and(`l.country = ${circleCountry(plain, search.country)}`);
  return `(CASE WHEN ${bound} < ${gridFrom}
      THEN (SELECT count(*) FROM libraries l ${plain.whereClause()}) END)::int`;
}

/**
 * The exact count of a proximity circle from the map's grid, as a scalar expression, or null when the grid cannot
 * serve it (gridCover). The cells inside the circle are summed from library_map_cells (its country and has_photo
 * facets are the list's); in the edge cells each library is tested as the plain count tests it: the box narrows
 * libraries_approved_point_idx, the grid's own cell functions keep exactly the run's cells (a library on a shared
 * border belongs to one), and _ST_DWithin decides. A dense 5 km circle (Berlin, 14,945 libraries at 1M) counted
 * every match (64–79 ms cold); here it reads about a thousand cell rows and the libraries of a ~100 m ring.
 */
function gridCircleCount(sql: Sql, search: LibrarySearch): string | null {
  const near = search.near;
  if (!near || near.radiusMeters === undefined || !gridCover(search)) return null;
  const cells = circleCells(near.lat, near.lng, near.radiusMeters);
  if (!cells) return null;
  const { inside, edge } = cells;
  const column = (pick: (row: EdgeRun) => number, type: 'int' | 'float8') =>
    runsArray(sql, edge.map(pick), type);
  const country = search.country ? circleCountry(sql, search.country) : null;
  const insideSum = cellSum(sql, inside, cellFacets(sql, search));
  // A one-row subquery (runsArray): a custom plan folded the cell functions' power of the level into a constant.
  const level = `(SELECT ${sql.param(cells.edgeLevel)}::int)`;
  const point = nearPoint(sql, near, true);
  const tested = new Sql(sql.params);
  tested.and(`l.status = 'approved'`);
  tested.and(`${APPROVED_POINT} <@ box(point(e.west, e.south), point(e.east, e.north))`);
  // A library strictly inside the run's cells by a hair (`k.core`, 1e-9° in from their borders) lies in them
  // whatever the rounding of the grid's cell functions, which are computed only for the others: the few within a
  // hair of a border, where they decide which cell a library on it belongs to. The functions cost ~0.6 µs per library
  // (two casts of the location, a logarithm and a tangent; 4.5 of 10.8 ms of backend CPU for a 50 km circle's 7,414
  // edge libraries), the box 0.05.
  tested.and(`(${APPROVED_POINT} <@ k.core
    OR (bookcase_map_cell(bookcase_map_y(ST_Y(l.location::geometry)), ${level}::int) = e.cy
      AND bookcase_map_cell(bookcase_map_x(ST_X(l.location::geometry)), ${level}::int) BETWEEN e.x0 AND e.x1))`);
  tested.and(withinRadius(tested, point, near, near.radiusMeters));
  if (country) tested.and(`l.country = ${country}`);
  if (search.hasPhoto === true) tested.and(HAS_PHOTO);
  if (search.hasPhoto === false) tested.and(`NOT ${HAS_PHOTO}`);
  const edgeCount = `(SELECT coalesce(sum(m.n), 0) FROM unnest(${column((r) => r.cy, 'int')},
        ${column((r) => r.x0, 'int')}, ${column((r) => r.x1, 'int')},
        ${column((r) => r.west, 'float8')}, ${column((r) => r.east, 'float8')},
        ${column((r) => r.south, 'float8')}, ${column((r) => r.north, 'float8')})
        AS e(cy, x0, x1, west, east, south, north)
      CROSS JOIN LATERAL (SELECT box(point(e.west + 2e-9, e.south + 2e-9),
                                     point(e.east - 2e-9, e.north - 2e-9)) AS core OFFSET 0) k
      CROSS JOIN LATERAL (SELECT count(*) AS n FROM libraries l ${tested.whereClause()}) m)`;
  return `(${insideSum} + ${edgeCount})::int`;
}

/**
 * The exact count of a proximity circle in one expression, library by library or from the grid as
 * sparseCircleCount chooses; null when the grid cannot serve the circle. countQuery's form: it computes the grid
 * cells whatever the choice, so the list itself sends sparseCircleCount and, when that is NULL,
 * circleGridCountAndPageQuery.
 */
function circleCount(sql: Sql, search: LibrarySearch, gridFrom = GRID_COUNT_FROM): string | null {
  const cover = gridCover(search);
  const grid = cover && gridCircleCount(sql, search);
  if (!cover || !grid) return null;
  return `coalesce(${sparseCircleCount(sql, search, cover, gridFrom)}, ${grid})`;
}

/** Whether a list filters by both places (with `country`, `has_photo` or neither) and nothing else. */
function bothPlaces(search: LibrarySearch): boolean {
  return Boolean(search.city && search.postalCode && !search.q && !search.search && !search.near);
}

/**
 * How a list of both places is read, for tests: which place's matching values find the pairs (`auto`: the postal
 * code's when bothPlacesDriver says so), and from how many index entries walked on the page reads the matching pairs'
 * libraries instead (PLACE_WALK_ENTRIES).
 */
export interface BothPlacesWay {
  driver: 'auto' | 'city' | 'postal_code';
  walkEntries: number;
}

/**
 * The values of a list of both places, each a one-row subquery (placeValue): the statement is prepared
 * (countAndPagePrepared) and its one plan serves every text.
 */
function bothPlacesValues(sql: Sql, search: LibrarySearch) {
  const value = (v: unknown, type: string) => placeValue(sql, v, type, true);
  // The raw text is a parameter only where it is read (PostgreSQL refuses one it never sees).
  const place = (text: string) => {
    let raw: string | undefined;
    return {
      get raw() {
        return (raw ??= value(text, 'text'));
      },
      escaped: value(likeEscape(text), 'text'),
    };
  };
  return {
    city: place(search.city ?? ''),
    postalCode: place(search.postalCode ?? ''),
    country: search.country ? value(search.country.toUpperCase(), 'char(2)') : null,
  };
}

/**
 * Whether the postal code's matching values find the pairs of a list of both places, as SQL true or false: when its
 * libraries are fewer than a twentieth of the city's (placeCount) and its values can be narrowed by the trigram index
 * (three characters or more, or with a country: the short grams' index, migration 1768100000001). Otherwise the
 * cities do: a city's pairs are one range of library_place_pairs' primary key (at 1M 100 to 1,000 postal codes per
 * city, 27,000 for London), read in order, where each matching postal code is a probe (about four libraries each);
 * one or two characters of a postal code without a country read all 206,797 values. With the country's grams,
 * `country=GB&city=London&postal_code=10` probes GB's 112 postal codes containing `10` instead of London's 27,000
 * pairs (5–9 → 1.4–1.7 ms). Over the 89 both-places requests of 2,000 `list-filters` at 1M (backend CPU, session
 * 10): the postal code drove whenever its libraries were fewer (117 ms in all; `has_photo=true&city=Köln&
 * postal_code=109`: 2,405 probes, 7.8 ms, 0.5 by the city), the city always 77 ms, the postal code always 1.4 s.
 */
function postalCodeDrives(
  sql: Sql,
  search: LibrarySearch,
  v: ReturnType<typeof bothPlacesValues>,
  driver: BothPlacesWay['driver'],
): string {
  if (driver !== 'auto') return driver === 'postal_code' ? 'true' : 'false';
  const total = (place: Place, text: string) =>
    placeCount(sql, { country: search.country }, { place, text }, true);
  // With a country, one or two characters are narrowed too (valuesOf: the short grams' index).
  const narrowed = v.country
    ? ''
    : `char_length(${v.postalCode.raw}) > 2
      AND `;
  return `(${narrowed}20 * ${total(PLACES.postalCode, search.postalCode ?? '')} < ${total(PLACES.city, search.city ?? '')})`;
}

/**
 * The pairs (library_place_pairs, migration 1767700000000) of a list of both places with approved libraries: found
 * from the matching values of one place (valuesOf: its counts' trigram or country index), the other place tested on
 * each pair. `drives` (postalCodeDrives) chooses the branch when the statement runs.
 */
function matchingPairs(v: ReturnType<typeof bothPlacesValues>, drives: string): string {
  // The text's length chooses how valuesOf reads the values.
  const folded = (place: Place) =>
    place === PLACES.city ? `lower(${v.city.raw})` : v.postalCode.raw;
  const values = (place: Place) =>
    valuesOf(
      place,
      place === PLACES.city ? v.city.escaped : v.postalCode.escaped,
      v.country,
      folded(place),
    );
  const pairs = `q.city, q.country, q.postal_code, q.approved, q.with_photo`;
  // Each place's values behind OFFSET 0: without the fence, PostgreSQL nested the values' trigram scan inside the
  // loop over the pairs and ran it once per pair (a 10k seed, `city=London&postal_code=805`: 349 scans, 571 ms;
  // fenced, 14 ms).
  return `SELECT ${pairs} FROM (${values(PLACES.city)} OFFSET 0) v
      JOIN library_place_pairs q ON q.city = v.city AND q.country = v.country
      WHERE NOT ${drives} AND ${hoistedMatches(PLACES.postalCode, 'q', v.postalCode.escaped)} AND q.approved > 0
    UNION ALL
    SELECT ${pairs} FROM (${values(PLACES.postalCode)} OFFSET 0) v
      JOIN library_place_pairs q ON q.postal_code = v.postal_code AND q.country = v.country
      WHERE ${drives} AND ${hoistedMatches(PLACES.city, 'q', v.city.escaped)} AND q.approved > 0`;
}

/**
 * The exact count of a list of both places over its matching pairs (`pairs`, a relation of matchingPairs), as a
 * scalar expression; with has_photo, photoAwareCount's community photos of the libraries of both places.
 */
function bothPlacesTotal(
  search: LibrarySearch,
  v: ReturnType<typeof bothPlacesValues>,
  pairs: string,
): string {
  const where = [
    hoistedMatches(PLACES.city, 'l', v.city.escaped),
    hoistedMatches(PLACES.postalCode, 'l', v.postalCode.escaped),
    ...(v.country ? [`l.country = ${v.country}`] : []),
  ];
  return photoAwareCount(
    search.hasPhoto,
    (column) => `(SELECT coalesce(sum(p.${column}), 0) FROM ${pairs})`,
    where.map((condition) => ` AND ${condition}`).join(''),
  );
}

/**
 * The exact count of a list filtered by both places: the sum over its pairs of city, postal code and country
 * (matchingPairs). It counted the smaller place's libraries one index entry each (at 1M
 * `country=DE&city=Hambur&postal_code=60`: 27,000 entries, 18 ms warm).
 */
function bothPlacesCount(sql: Sql, search: LibrarySearch): string {
  const v = bothPlacesValues(sql, search);
  const drives = postalCodeDrives(sql, search, v, 'auto');
  return bothPlacesTotal(search, v, `(${matchingPairs(v, drives)}) p`);
}

/**
 * Count and page of a list filtered by both places in one statement, prepared (countAndPagePrepared): the matching
 * pairs once (`pairs`, materialised), the total summed over them, and the page newest first by one of two plans
 * chosen at run time like placeCountAndPageQuery's: a walk of libraries_approved_created_places_idx testing both
 * places on each entry (many matches), or the newest `offset + limit` libraries of each pair from
 * libraries_approved_postal_code_created_idx (its city included), merged. `way` is for tests.
 */
export function bothPlacesCountAndPageQuery(
  search: LibrarySearch,
  userId: number | null,
  limit: number,
  offset: number,
  way: BothPlacesWay = { driver: 'auto', walkEntries: PLACE_WALK_ENTRIES },
): Statement {
  const sql = new Sql();
  const v = bothPlacesValues(sql, search);
  // The choice once, read by both branches of the pairs: as a subquery written in each it was two InitPlans, and
  // both places' counts were computed twice (at 1M a three-character postal code's count reads its ~2,000 values).
  const choice = postalCodeDrives(sql, search, v, way.driver);
  const pairs = matchingPairs(v, '(SELECT d.postal_code FROM drives d)');
  const total = bothPlacesTotal(search, v, 'pairs p');
  const columns = [LIST_ITEM_COLUMNS, favouritedColumn(sql, userId)].join(', ');
  const limitParam = placeValue(sql, limit, 'int', true);
  const offsetParam = placeValue(sql, offset, 'int', true);
  const wanted = `least(${limitParam}::int, greatest(t.total - ${offsetParam}::int, 0))`;
  const reach = `(${offsetParam}::int + ${limitParam}::int)`;
  // The walk reads about reach × approved (of the country, with one) ÷ total entries; the pairs one probe each and
  // up to `reach` libraries.
  // With has_photo each library read by pair is a probe too (placeCountAndPageQuery's `perRow`): without it, the lower
  // floor in a country sent `country=DE&has_photo=true&city=Lei&postal_code=045` (1,877 matches) to 1,773 libraries
  // by pair (4.3 ms) rather than a walk of 3,892 entries.
  const perRow = search.hasPhoto === undefined ? 1 : 4;
  const byPairs = `least(t.total::float8, t.pairs::float8 * ${reach}) * ${perRow} + t.pairs`;
  // With a country the floor of placeCountAndPageQuery's (PLACE_WALK_ENTRIES_IN_COUNTRY): a pair costs about what a
  // value does, a probe of the postal code's index.
  const floor = v.country
    ? Math.min(way.walkEntries, PLACE_WALK_ENTRIES_IN_COUNTRY)
    : way.walkEntries;
  const dense = `${reach}::float8 * ${walkedApproved(v.country)} <= t.total::float8 * greatest(${floor}, ${byPairs})`;
  const walking = new Sql(sql.params);
  walking.and(hoistedMatches(PLACES.city, 'w', v.city.escaped));
  walking.and(hoistedMatches(PLACES.postalCode, 'w', v.postalCode.escaped));
  if (search.hasPhoto !== undefined) walking.and(placePhoto('w.id', search.hasPhoto));
  const walked = walkedPlaces(v.country, 'l.city, l.postal_code');
  const ofPair = new Sql(sql.params);
  ofPair.and(`l.status = 'approved'`);
  ofPair.and('l.postal_code = p.postal_code');
  ofPair.and('l.country = p.country');
  ofPair.and('l.city = p.city');
  if (search.hasPhoto !== undefined) ofPair.and(ofValuePhoto(search.hasPhoto));
  return {
    text: `WITH drives AS MATERIALIZED (SELECT ${choice} AS postal_code),
      pairs AS MATERIALIZED (${pairs})
      SELECT t.total, r.* FROM (SELECT ${total} AS total, (SELECT count(*) FROM pairs) AS pairs OFFSET 0) t
       LEFT JOIN LATERAL (SELECT ${columns} FROM (
         (SELECT w.id, w.created_at FROM ${walked} ${walking.whereClause()} AND ${dense}
          ORDER BY w.created_at DESC, w.id DESC LIMIT ${wanted} OFFSET ${offsetParam})
         UNION ALL
         (SELECT m.id, m.created_at FROM pairs p
          CROSS JOIN LATERAL (SELECT l.id, l.created_at FROM libraries l ${ofPair.whereClause()}
            ORDER BY l.created_at DESC, l.id DESC LIMIT ${offsetParam}::int + ${wanted}) m
          WHERE NOT ${dense}
          ORDER BY m.created_at DESC, m.id DESC LIMIT ${wanted} OFFSET ${offsetParam})
       ) m JOIN libraries l ON l.id = m.id ORDER BY m.created_at DESC, m.id DESC) r ON true`,
    params: sql.params,
  };
}

/** The count statement of a proximity circle through the grid from `gridFrom` libraries around it (tests force 0). */
export function circleCountQuery(search: LibrarySearch, gridFrom: number): Statement | null {
  const sql = new Sql();
  const count = circleCount(sql, search, gridFrom);
  return count ? { text: `SELECT ${count} AS n`, params: sql.params } : null;
}
