/**
 * The cells of the map's grid (library_map_cells, issue 17: level L has 2^(L+2) Web Mercator cells across the world)
 * that a proximity circle covers, for an exact count linear in the circle's edge rather than its area: the libraries
 * of the cells that lie entirely inside the circle are summed from the grid's counts, and only the libraries of the
 * finest cells crossing the edge are tested one by one. Pure arithmetic; the SQL is in list-query.ts.
 *
 * The cell arithmetic is the migrations' (1764600000000: bookcase_map_x, bookcase_map_y, bookcase_map_cell). A cell
 * is split into its four children exactly, so every library belongs to exactly one counted cell or edge cell: its
 * cell at a coarser level is its finest cell's ancestor (floor(x · 2^k) for powers of two is exact in doubles).
 */
import { nearBox, sphereBounds } from './near-box.js';

/** The finest level of the grid. */
export const FINEST_LEVEL = 16;
/** Mean Earth radius (m) of the spherical distance below. */
const EARTH_RADIUS_M = 6_371_008.8;
/**
 * A metre against rounding, beside the bounds of the WGS 84 geodesic distance (what ST_DWithin on geography
 * measures) against the spherical distance around the circle (near-box.ts, sphereBounds).
 */
const SLACK_M = 1;
/** The edge is tested at the level whose cells are at least this many across the circle's diameter. */
const EDGE_CELLS_ACROSS = 32;
/** Circles less than this many finest cells across are counted one library at a time (no cell is inside). */
const MIN_FINEST_CELLS_ACROSS = 12;
/** Mercator's latitude limit: cells of the outermost rows reach beyond it (the grid clamps there). */
const MERCATOR_LAT = 85.0511287798066;

const RADIANS = Math.PI / 180;

/** A run of cells of one row of one level: cx from x0 to x1 inclusive. */
export interface CellRun {
  level: number;
  cy: number;
  x0: number;
  x1: number;
}

/** Edge runs of the finest level tested, with the box (degrees) holding them, widened by a hair. */
export interface EdgeRun extends CellRun {
  west: number;
  east: number;
  south: number;
  north: number;
}

export interface CircleCells {
  /** Runs of cells entirely inside the circle, at any level. */
  inside: CellRun[];
  /** Runs of cells of `edgeLevel` crossing the circle's edge, in which each library is tested. */
  edge: EdgeRun[];
  edgeLevel: number;
  /** Runs of the few coarse cells that cover the whole circle: their sum bounds the number of matches. */
  cover: CellRun[];
}

/** Cells across the world per level (a table: `2 ** n` with a variable exponent was a tenth of circleCells). */
const ACROSS = Array.from({ length: 32 }, (_, level) => 2 ** (level + 2));
const across = (level: number) => ACROSS[level];
const cellWest = (cx: number, level: number) => (cx / across(level)) * 360 - 180;
const cellNorth = (cy: number, level: number) =>
  Math.atan(Math.sinh(Math.PI * (1 - (2 * cy) / across(level)))) / RADIANS;
const gridX = (lng: number) => (lng + 180) / 360;
const gridY = (lat: number) =>
  0.5 - Math.log(Math.tan(Math.PI / 4 + (lat * RADIANS) / 2)) / (2 * Math.PI);
const cellOf = (v: number, level: number) =>
  Math.min(Math.max(Math.floor(v * across(level)), 0), across(level) - 1);

/** Great-circle distance (m) on the sphere of the mean radius. */
function sphereDistance(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = (lat2 - lat1) * RADIANS;
  const dLng = (lng2 - lng1) * RADIANS;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(lat1 * RADIANS) * Math.cos(lat2 * RADIANS) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

const INSIDE = 0;
const OUTSIDE = 1;
const EDGE = 2;

/**
 * The trigonometry of the corners of the edge level's cells below a circle's cover: each corner row's latitude,
 * sin²(Δφ/2) and cos φ₀ · cos φ, each corner column's longitude and sin²(Δλ/2), computed once, and each corner's
 * distance when first asked (a corner is shared by four cells). A coarser level's corner is one of these: corner
 * (x, y) of level L is corner (x · 2^k, y · 2^k) of level L + k, with the very same latitude and longitude (the cell
 * functions divide by a power of two). Typed arrays indexed from the cover's first row and column: Maps keyed by
 * level, row and column, and a distance computed for each of a corner's four cells, were most of circleCells.
 */
class CornerDistances {
  readonly latitudes: Float64Array;
  readonly longitudes: Float64Array;
  private readonly rowSin: Float64Array;
  private readonly rowCos: Float64Array;
  private readonly columnSin: Float64Array;
  private readonly distances: Float64Array;
  /** Per corner column: the latitude of the foot of the perpendicular great circle (nearest). */
  private readonly feet: Float64Array;
  private readonly width: number;
  /** The edge level's first corner column and row. */
  readonly x0: number;
  readonly y0: number;
  private readonly cosLat: number;
  private readonly sinLat: number;

  constructor(
    private readonly lat: number,
    private readonly lng: number,
    cover: CellRun[],
    start: number,
    edgeLevel: number,
  ) {
    this.cosLat = Math.cos(lat * RADIANS);
    this.sinLat = Math.sin(lat * RADIANS);
    const scale = 2 ** (edgeLevel - start);
    const first = cover[0];
    const rows = cover.length * scale;
    const columns = (first.x1 - first.x0 + 1) * scale;
    this.x0 = first.x0 * scale;
    this.y0 = first.cy * scale;
    this.width = columns + 1;
    this.latitudes = new Float64Array(rows + 1);
    this.rowSin = new Float64Array(rows + 1);
    this.rowCos = new Float64Array(rows + 1);
    for (let i = 0; i <= rows; i++) {
      const latitude = cellNorth(this.y0 + i, edgeLevel);
      const dLat = (latitude - lat) * RADIANS;
      this.latitudes[i] = latitude;
      this.rowSin[i] = Math.sin(dLat / 2) ** 2;
      this.rowCos[i] = this.cosLat * Math.cos(latitude * RADIANS);
    }
    this.longitudes = new Float64Array(columns + 1);
    this.columnSin = new Float64Array(columns + 1);
    for (let i = 0; i <= columns; i++) {
      const longitude = cellWest(this.x0 + i, edgeLevel);
      const dLng = (longitude - lng) * RADIANS;
      this.longitudes[i] = longitude;
      this.columnSin[i] = Math.sin(dLng / 2) ** 2;
    }
    this.distances = new Float64Array(this.width * (rows + 1)).fill(-1);
    this.feet = new Float64Array(columns + 1).fill(NaN);
  }

  /**
   * The distance from the centre to the corner at column and row (of the edge level, from x0 and y0), with
   * sphereDistance's arithmetic term for term, so the result is the same.
   */
  corner(column: number, row: number): number {
    const at = row * this.width + column;
    let distance = this.distances[at];
    if (distance < 0) {
      const h = this.rowSin[row] + this.rowCos[row] * this.columnSin[column];
      distance = 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
      this.distances[at] = distance;
    }
    return distance;
  }

  /**
   * The distance from the centre to the nearest point of the cell between corner columns west and east and corner
   * rows north and south (a latitude/longitude rectangle). Along a parallel the distance grows with the longitude
   * difference, so the nearest point lies on the centre's meridian when the cell spans it (then straight north or
   * south: R · Δφ), else on the nearer of the cell's two meridians. Along a meridian at longitude difference Δλ the
   * distance falls towards the latitude φ* = atan2(sin φ₀, cos φ₀ · cos Δλ) (the foot of the perpendicular great
   * circle) and rises away from it, so the nearest point is φ* clamped to the cell's latitudes: a corner (already
   * computed) unless φ* lies between them.
   */
  nearest(west: number, east: number, north: number, south: number): number {
    const westLng = this.longitudes[west];
    const eastLng = this.longitudes[east];
    const northLat = this.latitudes[north];
    const southLat = this.latitudes[south];
    if (this.lng >= westLng && this.lng <= eastLng) {
      const latitude = Math.min(Math.max(this.lat, southLat), northLat);
      return EARTH_RADIUS_M * Math.abs(latitude - this.lat) * RADIANS;
    }
    const side = this.lng < westLng ? west : east;
    const meridian = this.longitudes[side];
    let foot = this.feet[side];
    if (Number.isNaN(foot)) {
      const dLng = (meridian - this.lng) * RADIANS;
      foot = Math.atan2(this.sinLat, this.cosLat * Math.cos(dLng)) / RADIANS;
      this.feet[side] = foot;
    }
    if (foot >= northLat) return this.corner(side, north);
    if (foot <= southLat) return this.corner(side, south);
    return sphereDistance(this.lat, this.lng, foot, meridian);
  }
}

/**
 * Where cell (cx, cy) of the level `shift` levels above the edge level lies against the circle. Of a small
 * latitude/longitude rectangle, the point farthest from any given point is a corner (the distance grows with the
 * longitude difference along a parallel, and along a meridian has no maximum within a few degrees), so a cell is
 * inside when its farthest corner is, with the spheroid's bound. It is outside when its nearest point
 * (CornerDistances.nearest) is beyond the radius, with the spheroid's bound. Anything else is edge: tested library by
 * library, so never wrong. This runs for a few thousand cells per dense circle.
 */
function place(
  corners: CornerDistances,
  radius: number,
  bounds: { shortest: number; longest: number },
  shift: number,
  cx: number,
  cy: number,
): number {
  const west = cx * 2 ** shift - corners.x0;
  const east = (cx + 1) * 2 ** shift - corners.x0;
  const north = cy * 2 ** shift - corners.y0;
  const south = (cy + 1) * 2 ** shift - corners.y0;
  const a = corners.corner(west, north);
  const b = corners.corner(east, north);
  const c = corners.corner(west, south);
  const d = corners.corner(east, south);
  if (Math.max(a, b, c, d) * bounds.longest + SLACK_M <= radius) return INSIDE;
  if (corners.nearest(west, east, north, south) * bounds.shortest > radius + SLACK_M)
    return OUTSIDE;
  return EDGE;
}

/** Adds cell cx of row cy to `out`, extending its last run when the cell follows it. */
function addCell(out: CellRun[], level: number, cy: number, cx: number): void {
  const last = out.length ? out[out.length - 1] : undefined;
  if (last && last.level === level && last.cy === cy && last.x1 === cx - 1) last.x1 = cx;
  else out.push({ level, cy, x0: cx, x1: cx });
}

/** The few coarse cells around a circle, and the levels circleCells works at (circleCover). */
export interface CircleCover {
  /** Runs of the coarse cells (level `start`, about the circle's diameter wide) that cover the whole circle. */
  cover: CellRun[];
  start: number;
  edgeLevel: number;
}

/**
 * The coarse cells that cover the circle, or null when the grid cannot serve it (see circleCells): a handful of
 * cells and no distance, so cheap enough for every request. Their libraries bound the circle's (GRID_COUNT_FROM in
 * list-query.ts decides from it whether circleCells is worth computing).
 */
export function circleCover(lat: number, lng: number, radiusMeters: number): CircleCover | null {
  const box = nearBox(lat, lng, radiusMeters);
  if (!box || box.maxLat >= MERCATOR_LAT - 1 || box.minLat <= -MERCATOR_LAT + 1) return null;
  const diameterX = gridX(box.maxLng) - gridX(box.minLng);
  const diameterY = gridY(box.minLat) - gridY(box.maxLat);
  const diameter = Math.max(diameterX, diameterY);
  if (diameter * across(FINEST_LEVEL) < MIN_FINEST_CELLS_ACROSS) return null;
  // The coarsest level whose cells are at least EDGE_CELLS_ACROSS across the diameter, and the start: about four.
  let edgeLevel = FINEST_LEVEL;
  while (edgeLevel > 0 && diameter * across(edgeLevel - 1) >= EDGE_CELLS_ACROSS) edgeLevel -= 1;
  let start = edgeLevel;
  while (start > 0 && diameter * across(start - 1) >= 2) start -= 1;
  const cover: CellRun[] = [];
  for (let cy = cellOf(gridY(box.maxLat), start); cy <= cellOf(gridY(box.minLat), start); cy++)
    cover.push({
      level: start,
      cy,
      x0: cellOf(gridX(box.minLng), start),
      x1: cellOf(gridX(box.maxLng), start),
    });
  return { cover, start, edgeLevel };
}

/**
 * The cells of the circle (geodesic, `radiusMeters` around lat/lng), or null when counting them does not pay (a
 * circle a few finest cells across) or the grid cannot serve it (the circle reaches a pole, Mercator's limit or the
 * antimeridian). A few thousand cells classified: 50–110 µs of Node warm (session 11's per-cell Maps: 120–350; the
 * first calls of a process ~1–2 ms while V8 compiles), so only for circles the grid serves.
 */
export function circleCells(lat: number, lng: number, radiusMeters: number): CircleCells | null {
  const found = circleCover(lat, lng, radiusMeters);
  if (!found) return null;
  const { cover, start, edgeLevel } = found;
  const corners = new CornerDistances(lat, lng, cover, start, edgeLevel);
  // The circle's own bounds, not Earth's: the ring of edge cells is narrower by the band they leave out (at 50 km,
  // 1.1 % of the radius → 0.26 % at Berlin).
  const bounds = sphereBounds(lat, lng, radiusMeters);
  const inside: CellRun[] = [];
  const edge: CellRun[] = [];
  // The candidate cells of a level row by row, rows and cells in ascending order (children of the edge cells of the
  // level above), so that the runs come out sorted and maximal without a sort.
  let rows: number[] = [];
  let cells: number[][] = [];
  for (const { cy, x0, x1 } of cover) {
    const row: number[] = [];
    for (let cx = x0; cx <= x1; cx++) row.push(cx);
    rows.push(cy);
    cells.push(row);
  }
  for (let level = start; level <= edgeLevel; level++) {
    const nextRows: number[] = [];
    const nextCells: number[][] = [];
    for (let i = 0; i < rows.length; i++) {
      const cy = rows[i];
      const split: number[] = [];
      for (const cx of cells[i]) {
        const where = place(corners, radiusMeters, bounds, edgeLevel - level, cx, cy);
        if (where === INSIDE) addCell(inside, level, cy, cx);
        else if (where === EDGE && level === edgeLevel) addCell(edge, level, cy, cx);
        else if (where === EDGE) split.push(cx * 2, cx * 2 + 1);
      }
      if (split.length) {
        nextRows.push(cy * 2, cy * 2 + 1);
        nextCells.push(split, split);
      }
    }
    rows = nextRows;
    cells = nextCells;
  }
  // A hair wider than the cells (the exact cell test follows in SQL), as bookcase_map_cells_recount does.
  const edgeRuns = edge.map(({ level, cy, x0, x1 }) => ({
    level,
    cy,
    x0,
    x1,
    west: corners.longitudes[x0 - corners.x0] - 1e-9,
    east: corners.longitudes[x1 + 1 - corners.x0] + 1e-9,
    north: corners.latitudes[cy - corners.y0] + 1e-9,
    south: corners.latitudes[cy + 1 - corners.y0] - 1e-9,
  }));
  return { inside, edge: edgeRuns, edgeLevel, cover };
}
