import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { LIST_CACHE_TTL_MS } from '../libraries/approved-list.repository.js';
import {
  APPROVED_POINT,
  LibrariesRepository,
  Sql,
  type LibrarySearch,
} from '../libraries/libraries.repository.js';
import { ListCache } from '../libraries/list-cache.js';
import {
  coverOf,
  DENSE_FEED_FEATURES,
  innerCells,
  latOfY,
  lngOfX,
  PRECOMPUTED_LEVELS,
  rangeIsEmpty,
  TILE_EXTENT,
  touchedCells,
  tileBox,
  tileCells,
  type CellRange,
  type GeoBox,
} from './map-grid.js';

/** The list's filters that the map accepts (everything but proximity and paging). */
export type MapFilters = Omit<LibrarySearch, 'near'>;

/** One non-empty cell of the grid: a lone library (count 1, with its columns) or a cluster. */
export interface MapCellRow {
  n: number;
  lng: number;
  lat: number;
  /** The members' extent: a cluster's only (null for a lone library). */
  west: number | null;
  south: number | null;
  east: number | null;
  north: number | null;
  id: number;
  slug: string | null;
  name: string | null;
  city: string | null;
  country: string | null;
  thumbnail_key: string | null;
}

/** One feature of a tile: a library (n = 1, with id, slug, name) or a cluster of n, at tile coordinates px, py. */
export interface TileFeatureRow {
  n: number;
  id: number;
  slug: string | null;
  name: string | null;
  px: number;
  py: number;
}

/** Libraries strictly inside a tile would be at most this far from the tile's edge in degrees; ring boxes overlap by it. */
const EPSILON = 1e-9;

/** The filters the grid cannot answer (its facets are the country and has_photo): the libraries are grouped. */
const hasTextFilters = (filters: MapFilters): boolean =>
  Boolean(filters.q || filters.search || filters.city || filters.postalCode);

/** The grid's facets a request asks for (country upper-cased as the list compares it). */
const facetsOf = (filters: MapFilters): MapFilters => ({
  country: filters.country,
  hasPhoto: filters.hasPhoto,
});

const cellSql = (level: number, lng: string, lat: string) =>
  `bookcase_map_cell(bookcase_map_x(${lng}), ${level}) AS cx, bookcase_map_cell(bookcase_map_y(${lat}), ${level}) AS cy`;

const pointIn = (sql: Sql, box: GeoBox, point = APPROVED_POINT) =>
  `${point} <@ box(point(${sql.param(box.west)}, ${sql.param(box.south)}), point(${sql.param(box.east)}, ${sql.param(box.north)}))`;

const inRange = (sql: Sql, cx: string, cy: string, r: CellRange) =>
  `(${cx} BETWEEN ${sql.param(r.x0)} AND ${sql.param(r.x1)} AND ${cy} BETWEEN ${sql.param(r.y0)} AND ${sql.param(r.y1)})`;

/**
 * Numbers as the text of a PostgreSQL array (`{1,2.5,-3}`), the form `pg` sends a JavaScript array in (numbers
 * written by their shortest round-trip form either way). `pg` builds it element by element, ~200 bytes of garbage
 * per element: 30–40 KB per unfiltered feed request (its cover's 12 arrays), ~3 MB for 5,000 text-filter
 * candidates (three arrays), where the whole request allocated ~210 KB (V8's sampling heap profiler).
 */
const arrayLiteral = (values: number[]): string => `{${values.join(',')}}`;

/**
 * An array parameter whose length the planner does not see (a scalar subquery: it estimates 10 elements either
 * way). Planned with the actual values (a custom plan), the length made each execution's estimate differ from the
 * generic plan's, which PostgreSQL then never chose: it planned every execution afresh, at the cost of running it.
 */
const opaqueArray = (sql: Sql, values: number[], type: 'int' | 'float8' = 'int') =>
  `(SELECT ${sql.param(arrayLiteral(values))}::${type}[])`;

/**
 * A value the planner does not see (a one-row subquery, computed once per execution), for the prepared statements'
 * values that change the estimates: a tile's level and cell range, a facet's country or photo state. Planned with the
 * values (a custom plan), the estimates differed from the generic plan's, so PostgreSQL never chose it and planned
 * every execution afresh: 0.4–0.5 ms of planning for a tile whose statement runs in 0.1–0.4 ms (issue 22).
 */
const opaque = (sql: Sql, value: number | string | boolean, type: 'int' | 'bpchar' | 'boolean') =>
  `(SELECT ${sql.param(value)}::${type})`;

/** The grid's facet conditions on a cell row `c` (a cell has a row per country and photo state present in it). */
function facetConditions(sql: Sql, facets: MapFilters): string {
  let facet = '';
  if (facets.country)
    facet += ` AND c.country = ${opaque(sql, facets.country.toUpperCase(), 'bpchar')}`;
  if (facets.hasPhoto !== undefined)
    facet += ` AND c.has_photo = ${opaque(sql, facets.hasPhoto, 'boolean')}`;
  return facet;
}

/**
 * The feed's columns of a cell: only what the mapper writes (a lone library's extent is its point, and the cell's
 * coordinates only order the rows), so `pg` parses 9 values of a lone library's row instead of 15.
 */
const FEED_COLUMNS = `cells.n, cells.lng, cells.lat, cells.id,
  CASE WHEN cells.n > 1 THEN cells.west END AS west, CASE WHEN cells.n > 1 THEN cells.south END AS south,
  CASE WHEN cells.n > 1 THEN cells.east END AS east, CASE WHEN cells.n > 1 THEN cells.north END AS north`;

/** A box that holds no library (south of the south pole). */
const NO_STRIP: GeoBox = { west: 0, south: -91, east: 0, north: -91 };

/** The approved libraries a text filter matches anywhere (ids and points), or `null` when more than the bound. */
type Candidates = { ids: number[]; lngs: number[]; lats: number[] } | null;

/**
 * The map's reads. Clusters come from the precomputed grid (library_map_cells, with its facets country and
 * has_photo) where the request allows it, and otherwise from the libraries themselves, grouped by the same cell
 * functions; either way each cell's members are exactly the approved (and matching) libraries inside the box.
 */
@Injectable()
export class MapRepository {
  /**
   * A text filter's candidates, kept for LIST_CACHE_TTL_MS (as the list keeps its large counts; the feed's shared
   * caches may lag 60 s anyway): a map panning with one filter reads them once, and a filter with too many matches
   * is refused from memory. At most MAP_TEXT_FILTER_MAX_CANDIDATES points per entry and 100 entries (~12 MB with
   * the default 5,000).
   */
  private readonly candidates: ListCache;

  constructor(
    private readonly libraries: LibrariesRepository,
    clock: Clock,
  ) {
    this.candidates = new ListCache(clock, { ttlMs: LIST_CACHE_TTL_MS, maxEntries: 100 });
  }

  /**
   * The non-empty cells of `level` inside the boxes, ordered by row then column; when they are more than
   * DENSE_FEED_FEATURES and `coarsen` (see mayCoarsen), the cells of level − 1 instead.
   *
   * With a text filter (q, search, city, postal_code), which the grid has no facet for, the matching libraries are
   * grouped themselves, and at most `maxCandidates` libraries are read, from whichever side is small enough: the
   * box's (when the grid says the box holds at most that many approved libraries of the request's facets: the
   * point's GiST index drives) or the filter's (when at most that many approved libraries match it anywhere: the
   * list's index drives and the box is tested on those). When both are larger, null: nothing is grouped.
   */
  async findFeedCells(
    boxes: GeoBox[],
    level: number,
    filters: MapFilters,
    maxCandidates: number,
    coarsen = false,
  ): Promise<MapCellRow[] | null> {
    const sql = new Sql();
    if (!hasTextFilters(filters)) {
      const parts =
        level > PRECOMPUTED_LEVELS
          ? this.groupedLibraries(sql, boxes, level, filters)
          : boxes
              .map((box) => this.precomputedParts(sql, box, level, facetsOf(filters)))
              .join(' UNION ALL ');
      // The grid's statements come in a handful of shapes and cost more to plan (~1 ms) than to run: prepared per
      // connection.
      return this.libraries.read<MapCellRow>(
        this.cellsStatement(parts, { sql, coarsen }),
        sql.params,
        true,
      );
    }
    // Statements reading libraries by a text filter are not prepared, as the filter's selectivity decides their
    // plan (see LibrariesRepository).
    const inBoxes = await this.boxUpperBound(
      boxes,
      Math.min(level + 1, PRECOMPUTED_LEVELS),
      filters,
    );
    if (inBoxes <= maxCandidates) {
      return this.libraries.read<MapCellRow>(
        this.cellsStatement(this.groupedLibraries(sql, boxes, level, filters), { sql, coarsen }),
        sql.params,
        false,
      );
    }
    const candidates = await this.candidates.get(
      JSON.stringify([
        filters.q,
        filters.search,
        filters.city,
        filters.postalCode,
        filters.country,
        filters.hasPhoto,
        maxCandidates,
      ]),
      () => this.findCandidates(filters, maxCandidates),
      () => true,
    );
    if (candidates === null) return null;
    // `point <@ box` of PostgreSQL: every edge inclusive.
    // Plain loops: a closure per candidate (`boxes.some(...)`) was most of this request's own garbage.
    const ids: number[] = [];
    const lngs: number[] = [];
    const lats: number[] = [];
    for (let i = 0; i < candidates.ids.length; i += 1) {
      const lng = candidates.lngs[i];
      const lat = candidates.lats[i];
      for (let j = 0; j < boxes.length; j += 1) {
        const b = boxes[j];
        if (lng >= b.west && lng <= b.east && lat >= b.south && lat <= b.north) {
          ids.push(candidates.ids[i]);
          lngs.push(lng);
          lats.push(lat);
          break;
        }
      }
    }
    const parts = `SELECT ${cellSql(level, 'p.lng', 'p.lat')}, 1 AS count, p.lng AS sum_lng, p.lat AS sum_lat,
        p.lng AS min_lng, p.lat AS min_lat, p.lng AS max_lng, p.lat AS max_lat, p.id AS min_id
      FROM unnest(${opaqueArray(sql, ids)}, ${opaqueArray(sql, lngs, 'float8')},
                  ${opaqueArray(sql, lats, 'float8')}) AS p(id, lng, lat)`;
    return this.libraries.read<MapCellRow>(
      this.cellsStatement(parts, { sql, coarsen }),
      sql.params,
      true,
    );
  }

  /**
   * The filter's matches anywhere, at most one more than the bound (the LIMIT keeps the plan on the list's index
   * or a scan that stops early); null when there are more.
   */
  private async findCandidates(filters: MapFilters, maxCandidates: number): Promise<Candidates> {
    const where = new Sql();
    this.libraries.addApprovedFilters(where, filters);
    const rows = await this.libraries.read<{ id: number; point: { x: number; y: number } }>(
      `SELECT l.id, ${APPROVED_POINT} AS point FROM libraries l ${where.whereClause()}
       LIMIT ${where.param(maxCandidates + 1)}`,
      where.params,
      false,
    );
    if (rows.length > maxCandidates) return null;
    return {
      ids: rows.map((row) => row.id),
      lngs: rows.map((row) => row.point.x),
      lats: rows.map((row) => row.point.y),
    };
  }

  /**
   * At least the approved libraries with the request's facets (country, has_photo) in the boxes: the sum over the
   * cells of `level` the boxes touch (one index probe per row of cells).
   */
  private async boxUpperBound(
    boxes: GeoBox[],
    level: number,
    filters: MapFilters,
  ): Promise<number> {
    const sql = new Sql();
    const ranges = boxes.map((box) => touchedCells(box, level));
    const rows: CellRange[] = ranges.flatMap((r) =>
      Array.from({ length: r.y1 - r.y0 + 1 }, (_, i) => ({ ...r, y0: r.y0 + i, y1: r.y0 + i })),
    );
    const facet = facetConditions(sql, facetsOf(filters));
    const [{ n }] = await this.libraries.read<{ n: number }>(
      `SELECT coalesce(sum(c.count), 0)::float8 AS n
       FROM unnest(${opaqueArray(
         sql,
         rows.map((r) => r.y0),
       )},
                   ${opaqueArray(
                     sql,
                     rows.map((r) => r.x0),
                   )},
                   ${opaqueArray(
                     sql,
                     rows.map((r) => r.x1),
                   )}) AS v(cy, x0, x1)
       JOIN library_map_cells c ON c.level = ${opaque(sql, level, 'int')} AND c.cy = v.cy AND c.cx BETWEEN v.x0 AND v.x1${facet}`,
      sql.params,
      true,
    );
    return n;
  }

  /** A tile encoded by PostGIS (ST_AsMVT): layer `libraries` (ordered by id), then `clusters` (by row, column). */
  async findTileMvt(
    z: number,
    x: number,
    y: number,
  ): Promise<{ tile: Buffer; libraries: number; clusters: number }> {
    const sql = new Sql();
    const features = this.tileFeatures(sql, z, x, y);
    const rows = await this.libraries.read<{ tile: Buffer; libraries: number; clusters: number }>(
      `WITH f AS (${features}, ST_MakePoint(f.px, f.py) AS geom FROM f0 f)
       SELECT
         coalesce((SELECT ST_AsMVT(t, 'libraries', ${TILE_EXTENT}, 'geom')
                   FROM (SELECT id, slug, name, geom FROM f WHERE n = 1 ORDER BY id) t), ''::bytea)
         || coalesce((SELECT ST_AsMVT(t, 'clusters', ${TILE_EXTENT}, 'geom')
                      FROM (SELECT n AS count, geom FROM f WHERE n > 1 ORDER BY cy, cx) t), ''::bytea) AS tile,
         (SELECT count(*)::int FROM f WHERE n = 1) AS libraries,
         (SELECT count(*)::int FROM f WHERE n > 1) AS clusters`,
      sql.params,
      true,
    );
    return rows[0];
  }

  /** The features of a tile in tile coordinates, in the order findTileMvt writes them (for PostGIS without MVT). */
  findTileFeatures(z: number, x: number, y: number): Promise<TileFeatureRow[]> {
    const sql = new Sql();
    const features = this.tileFeatures(sql, z, x, y);
    return this.libraries.read<TileFeatureRow>(
      `WITH f AS (${features} FROM f0 f)
       SELECT n, id, slug, name, px, py FROM f ORDER BY (n > 1), CASE WHEN n = 1 THEN id END, cy, cx`,
      sql.params,
      true,
    );
  }

  /**
   * `WITH f0 AS (the cells of the tile at level z + 1, with tile coordinates px, py) SELECT f.*`, for the caller to
   * complete with more columns and `FROM f0 f`.
   */
  private tileFeatures(sql: Sql, z: number, x: number, y: number): string {
    const range = tileCells(z, x, y);
    let parts: string;
    if (range.level <= PRECOMPUTED_LEVELS) {
      parts = `SELECT cx, cy, count, sum_lng, sum_lat, min_lng, min_lat, max_lng, max_lat, min_id
        FROM library_map_cells WHERE level = ${opaque(sql, range.level, 'int')}
          AND cx BETWEEN ${opaque(sql, range.x0, 'int')} AND ${opaque(sql, range.x1, 'int')}
          AND cy BETWEEN ${opaque(sql, range.y0, 'int')} AND ${opaque(sql, range.y1, 'int')}`;
    } else {
      const box = tileBox(z, x, y);
      const widened = {
        west: box.west - EPSILON,
        south: box.south - EPSILON,
        east: box.east + EPSILON,
        north: box.north + EPSILON,
      };
      const where = new Sql(sql.params);
      where.and(`l.status = 'approved'`);
      where.and(pointIn(where, widened));
      parts = `SELECT * FROM (${this.pointsStatement(range.level, where)}) p
        WHERE ${inRange(sql, 'p.cx', 'p.cy', range)}`;
    }
    const scale = sql.param(2 ** z);
    const px = `least(greatest(floor((bookcase_map_x(c.lng) * ${scale} - ${sql.param(x)}) * ${TILE_EXTENT}), 0), ${TILE_EXTENT - 1})::int`;
    const py = `least(greatest(floor((bookcase_map_y(c.lat) * ${scale} - ${sql.param(y)}) * ${TILE_EXTENT}), 0), ${TILE_EXTENT - 1})::int`;
    return `WITH f0 AS (SELECT c.*, ${px} AS px, ${py} AS py FROM (${this.cellsStatement(parts)}) c)
      SELECT f.*`;
  }

  /**
   * Groups `parts` (cells of the output level with partial sums) into cells, with the columns of lone libraries.
   * The join key is null for a cluster, so only lone libraries are looked up (with `n = 1 AND l.id = id` in the
   * join condition PostgreSQL probed the primary key for every cell and discarded the clusters' rows afterwards:
   * 4 buffers per cluster for nothing).
   *
   * With `dense.coarsen` (the feed, see mayCoarsen), a view of more than DENSE_FEED_FEATURES non-empty cells is
   * grouped again one level coarser before anything is looked up: the cells' sums roll up exactly as the grid's
   * levels do (a cell of level L − 1 is 2 × 2 cells of level L).
   */
  private cellsStatement(parts: string, dense?: { sql: Sql; coarsen: boolean }): string {
    const lookups = (
      columns: string,
    ) => `SELECT ${columns}, l.slug, l.name, l.city, l.country, l.thumbnail_key
      FROM cells LEFT JOIN libraries l ON l.id = CASE WHEN cells.n = 1 THEN cells.id END
      ORDER BY cells.cy, cells.cx`;
    if (!dense) {
      // Tiles: always the tile's own cells (8 × 8), in one grouping.
      return `WITH parts AS (${parts}),
      cells AS (
        SELECT cx, cy, sum(count)::int AS n, sum(sum_lng) / sum(count) AS lng, sum(sum_lat) / sum(count) AS lat,
               min(min_lng) AS west, min(min_lat) AS south, max(max_lng) AS east, max(max_lat) AS north,
               min(min_id) AS id
        FROM parts GROUP BY cx, cy)
      ${lookups('cells.*')}`;
    }
    // Coarser by one level when the view holds more than DENSE_FEED_FEATURES cells (and may be coarsened); counted
    // once (inlined, the CTE's subquery was an InitPlan for each of cx and cy).
    const shift = `(SELECT (${dense.sql.param(dense.coarsen)} AND count(*) > ${dense.sql.param(DENSE_FEED_FEATURES)})::int
                    FROM fine)`;
    return `WITH parts AS (${parts}),
      fine AS (
        SELECT cx, cy, sum(count)::int AS n, sum(sum_lng) AS sum_lng, sum(sum_lat) AS sum_lat, min(min_lng) AS west,
               min(min_lat) AS south, max(max_lng) AS east, max(max_lat) AS north, min(min_id) AS id
        FROM parts GROUP BY cx, cy),
      shift AS MATERIALIZED (SELECT ${shift} AS s),
      cells AS (
        SELECT f.cx >> shift.s AS cx, f.cy >> shift.s AS cy, sum(f.n)::int AS n, sum(f.sum_lng) / sum(f.n) AS lng,
               sum(f.sum_lat) / sum(f.n) AS lat, min(f.west) AS west, min(f.south) AS south, max(f.east) AS east,
               max(f.north) AS north, min(f.id) AS id
        FROM fine f CROSS JOIN shift GROUP BY 1, 2)
      ${lookups(FEED_COLUMNS)}`;
  }

  /** Every matching library in the boxes as a one-member part of its cell of `level`. */
  private pointsStatement(level: number, where: Sql): string {
    return `SELECT ${cellSql(level, 'p.lng', 'p.lat')}, 1 AS count, p.lng AS sum_lng, p.lat AS sum_lat,
        p.lng AS min_lng, p.lat AS min_lat, p.lng AS max_lng, p.lat AS max_lat, p.id AS min_id
      FROM (SELECT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat
            FROM libraries l ${where.whereClause()}) p`;
  }

  /**
   * With a text filter on a box of few libraries, or beyond the precomputed levels: the matching libraries in the
   * boxes, grouped (the list's own conditions; the planner picks the list's index or the point's GiST index).
   */
  private groupedLibraries(sql: Sql, boxes: GeoBox[], level: number, filters: MapFilters): string {
    const where = new Sql(sql.params);
    this.libraries.addApprovedFilters(where, filters);
    where.and(`(${boxes.map((box) => pointIn(where, box)).join(' OR ')})`);
    return this.pointsStatement(level, where);
  }

  /**
   * One box from the precomputed grid: the cells wholly inside it, coarsest first (coverOf), each rolled up to
   * `level`, and the libraries of the partial cells at the finest precomputed level, read from the table through
   * the GiST index on the point (thin strips along the edges).
   *
   * Every varying part of a view is an array parameter, so a box gives one statement text per facet combination
   * whatever its size and place. PostgreSQL then settles on one generic plan per prepared statement: with the strips
   * as literal boxes it kept planning each execution afresh (their estimated rows differ per box), and planning cost
   * as much as running (~0.9 ms at 1M libraries).
   */
  private precomputedParts(sql: Sql, box: GeoBox, level: number, facets: MapFilters): string {
    const rows: CellRange[] = [];
    const columns: CellRange[] = [];
    for (const range of coverOf(box, level, PRECOMPUTED_LEVELS)) {
      // One index probe per row or column: (level, cy, cx) for a row, the primary key for a column.
      if (range.y1 - range.y0 <= range.x1 - range.x0) {
        for (let y = range.y0; y <= range.y1; y += 1) rows.push({ ...range, y0: y, y1: y });
      } else {
        for (let x = range.x0; x <= range.x1; x += 1) columns.push({ ...range, x0: x, x1: x });
      }
    }
    const arrays = (ranges: CellRange[]) =>
      [
        ranges.map((r) => r.level),
        ranges.map((r) => r.level - level),
        ranges.map((r) => r.x0),
        ranges.map((r) => r.x1),
        ranges.map((r) => r.y0),
        ranges.map((r) => r.y1),
      ].map((values) => opaqueArray(sql, values));
    const rolledUp = `c.cx >> v.shift AS cx, c.cy >> v.shift AS cy, c.count, c.sum_lng, c.sum_lat, c.min_lng,
      c.min_lat, c.max_lng, c.max_lat, c.min_id`;
    const facet = facetConditions(sql, facets);
    return `SELECT ${rolledUp}
        FROM unnest(${arrays(rows).join(', ')}) AS v(level, shift, x0, x1, y0, y1)
        JOIN library_map_cells c ON c.level = v.level AND c.cy = v.y0 AND c.cx BETWEEN v.x0 AND v.x1${facet}
      UNION ALL SELECT ${rolledUp}
        FROM unnest(${arrays(columns).join(', ')}) AS v(level, shift, x0, x1, y0, y1)
        JOIN library_map_cells c ON c.level = v.level AND c.cx = v.x0 AND c.cy BETWEEN v.y0 AND v.y1${facet}
      UNION ALL ${this.partialCells(sql, box, level, facets)}`;
  }

  /**
   * The libraries of `box` outside its whole cells of the finest precomputed level, as parts of `level`: the
   * libraries of the strips between the box and its whole cells (each strip overlapping the whole cells by a hair;
   * the exact test is the cell's own), or of the whole box when it holds no whole cell (an empty range: the test
   * excludes nothing). A library on the corner of two strips is read twice and counted once.
   */
  private partialCells(sql: Sql, box: GeoBox, level: number, facets: MapFilters): string {
    const finest = PRECOMPUTED_LEVELS;
    const inner = innerCells(box, finest);
    let strips: GeoBox[] = [box];
    if (!rangeIsEmpty(inner)) {
      const west = lngOfX(inner.x0, finest) + EPSILON;
      const east = lngOfX(inner.x1 + 1, finest) - EPSILON;
      const north = latOfY(inner.y0, finest) - EPSILON;
      const south = latOfY(inner.y1 + 1, finest) + EPSILON;
      strips = [
        { west: box.west, east: box.east, south: Math.max(box.south, north), north: box.north },
        { west: box.west, east: box.east, south: box.south, north: Math.min(box.north, south) },
        { west: box.west, east: Math.min(box.east, west), south: box.south, north: box.north },
        { west: Math.max(box.west, east), east: box.east, south: box.south, north: box.north },
      ].filter((strip) => strip.west <= strip.east && strip.south <= strip.north);
    }
    const where = new Sql(sql.params);
    // The country as an opaque value (see `opaque`); the photo state is an expression without a parameter.
    this.libraries.addApprovedFilters(where, { hasPhoto: facets.hasPhoto });
    if (facets.country)
      where.and(`l.country = ${opaque(where, facets.country.toUpperCase(), 'bpchar')}`);
    where.and(`${APPROVED_POINT} <@ box(point(s.west, s.south), point(s.east, s.north))`);
    // Always four strips (unused ones below the south pole, where no library is): the planner counts them right
    // whatever the values, and the shape of the statement never changes.
    const strip = (index: number) => {
      const { west, south, east, north } = strips[index] ?? NO_STRIP;
      return `(${[west, south, east, north].map((value) => `${sql.param(value)}::float8`).join(', ')})`;
    };
    const stripValues = `VALUES ${[0, 1, 2, 3].map(strip).join(', ')}`;
    return `SELECT * FROM (
        SELECT ${cellSql(level, 'p.lng', 'p.lat')}, 1 AS count, p.lng AS sum_lng, p.lat AS sum_lat,
          p.lng AS min_lng, p.lat AS min_lat, p.lng AS max_lng, p.lat AS max_lat, p.id AS min_id
        FROM (SELECT DISTINCT l.id, ST_X(l.location::geometry) AS lng, ST_Y(l.location::geometry) AS lat
              FROM (${stripValues}) AS s(west, south, east, north)
              JOIN libraries l ON true ${where.whereClause()}) p) p
      WHERE NOT (bookcase_map_cell(bookcase_map_x(p.sum_lng), ${finest}) BETWEEN ${sql.param(inner.x0)} AND ${sql.param(inner.x1)}
        AND bookcase_map_cell(bookcase_map_y(p.sum_lat), ${finest}) BETWEEN ${sql.param(inner.y0)} AND ${sql.param(inner.y1)})`;
  }
}
