/**
 * The clustering grid of the map feed and tiles, in TypeScript. The same arithmetic is in SQL (bookcase_map_x,
 * bookcase_map_y, bookcase_map_cell; migration 1764600000000), which assigns the libraries to cells; this side only
 * computes which cells a request covers.
 *
 * Web Mercator, normalised to [0, 1] (x east from the antimeridian, y south from 85.05°N). A cell of level L is a
 * quarter of a zoom-L tile: 2^(L+2) cells across the world (at level 18 about 38 m, so libraries 200 m apart
 * never share one). Latitudes beyond Web Mercator's ±85.05° fall into the outermost row.
 */

/** Levels with precomputed cells (library_map_cells); finer levels are grouped from the libraries directly. */
export const PRECOMPUTED_LEVELS = 16;
/** At most this many cells in a feed's view, hence at most this many features (one per non-empty cell). */
export const MAX_FEED_CELLS = 2000;
/** From this zoom up, a feed's grid is never coarser than this level (cells of ~76 m: diagonal < 200 m). */
export const FINE_ZOOM = 18;
export const FINEST_COARSENED_LEVEL = 17;
/**
 * A view with more non-empty cells than this at its level is answered one level coarser (cells of half a tile,
 * 128 px): at most ~500 features instead of up to MAX_FEED_CELLS. A phone's screen holds ~70 cells of the zoom's own
 * level and a 1680 × 1050 one ~460, so only views larger than a desktop screen over a dense city are coarsened;
 * their hundreds of 64-px features would be a carpet of markers, and they were the feed's dearest answers (600–900
 * features, 120–190 KB at 1M libraries).
 */
export const DENSE_FEED_FEATURES = 500;
export const MAX_ZOOM = 22;
/** A tile of zoom z is grouped at level z + 1: 8 × 8 cells per tile. */
export const TILE_CELL_SHIFT = 3;
export const TILE_EXTENT = 4096;

const MAX_LAT = 85.0511287798066;

export const cellsAcross = (level: number): number => 2 ** (level + 2);

export function mapX(lng: number): number {
  return (lng + 180.0) / 360.0;
}

export function mapY(lat: number): number {
  const clamped = Math.min(MAX_LAT, Math.max(-MAX_LAT, lat));
  return 0.5 - Math.log(Math.tan(Math.PI / 4 + (clamped * Math.PI) / 180 / 2)) / (2 * Math.PI);
}

export function cellOf(value: number, level: number): number {
  const n = cellsAcross(level);
  return Math.min(Math.max(Math.floor(value * n), 0), n - 1);
}

/** Longitude of a cell column's west edge (x from 0 to n). */
export const lngOfX = (x: number, level: number): number => (x / cellsAcross(level)) * 360 - 180;

/** Latitude of a cell row's north edge (y from 0 to n). */
export const latOfY = (y: number, level: number): number =>
  (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / cellsAcross(level)))) * 180) / Math.PI;

/** A box in degrees, west ≤ east (a box crossing the antimeridian is two of these). */
export interface GeoBox {
  west: number;
  south: number;
  east: number;
  north: number;
}

/** An inclusive range of cells of one level. */
export interface CellRange {
  level: number;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

export const rangeIsEmpty = (r: CellRange): boolean => r.x0 > r.x1 || r.y0 > r.y1;
export const rangeSize = (r: CellRange): number =>
  rangeIsEmpty(r) ? 0 : (r.x1 - r.x0 + 1) * (r.y1 - r.y0 + 1);

/**
 * `minLng,minLat,maxLng,maxLat` as one or two boxes: longitudes are wrapped into −180…180 (a box with
 * `minLng > maxLng`, or one that runs past ±180, crosses the antimeridian and is split there), a box 360° wide or
 * more is the whole world, latitudes are clamped to ±90.
 */
export function normalizeBbox(
  minLng: number,
  minLat: number,
  maxLng: number,
  maxLat: number,
): GeoBox[] {
  const south = Math.max(-90, Math.min(90, minLat));
  const north = Math.max(-90, Math.min(90, maxLat));
  const span = minLng <= maxLng ? maxLng - minLng : maxLng - minLng + 360;
  if (span >= 360) return [{ west: -180, south, east: 180, north }];
  let west = ((((minLng + 180) % 360) + 360) % 360) - 180;
  if (west === 180) west = -180;
  const east = west + span;
  if (east <= 180) return [{ west, south, east, north }];
  return [
    { west, south, east: 180, north },
    { west: -180, south, east: east - 360, north },
  ];
}

/** Every cell of `level` a box touches. */
export function touchedCells(box: GeoBox, level: number): CellRange {
  return {
    level,
    x0: cellOf(mapX(box.west), level),
    x1: cellOf(mapX(box.east), level),
    y0: cellOf(mapY(box.north), level),
    y1: cellOf(mapY(box.south), level),
  };
}

/**
 * The cells of `level` wholly inside a box (possibly an empty range). The outermost rows and columns hold what the
 * grid clamps (latitudes beyond ±85.05°, longitude 180), so they are inside only when the box reaches the pole or
 * the antimeridian.
 */
export function innerCells(box: GeoBox, level: number): CellRange {
  const n = cellsAcross(level);
  let x0 = Math.ceil(mapX(box.west) * n);
  let x1 = Math.floor(mapX(box.east) * n) - 1;
  let y0 = Math.ceil(mapY(box.north) * n);
  let y1 = Math.floor(mapY(box.south) * n) - 1;
  if (box.east >= 180) x1 = n - 1;
  else x1 = Math.min(x1, n - 2);
  if (box.west <= -180) x0 = 0;
  if (box.north >= 90) y0 = 0;
  else y0 = Math.max(y0, 1);
  if (box.south <= -90) y1 = n - 1;
  else y1 = Math.min(y1, n - 2);
  return { level, x0, x1, y0, y1 };
}

/**
 * The grid level of a feed: the zoom's own, coarsened while the view would hold more than MAX_FEED_CELLS cells
 * (a box much larger than a screen at that zoom). From FINE_ZOOM up it is never coarser than FINEST_COARSENED_LEVEL;
 * null when even that is too many cells (the caller answers 422).
 */
export function feedLevel(boxes: GeoBox[], zoom: number): number | null {
  const floor = zoom >= FINE_ZOOM ? FINEST_COARSENED_LEVEL : 0;
  for (let level = zoom; level >= floor; level -= 1) {
    const cells = boxes.reduce((sum, box) => sum + rangeSize(touchedCells(box, level)), 0);
    if (cells <= MAX_FEED_CELLS) return level;
  }
  return null;
}

/**
 * Whether a dense view at `level` may be answered one level coarser (see DENSE_FEED_FEATURES): not at level 0, and
 * from FINE_ZOOM up not below FINEST_COARSENED_LEVEL (libraries 200 m apart stay apart).
 */
export function mayCoarsen(level: number, zoom: number): boolean {
  return level > (zoom >= FINE_ZOOM ? FINEST_COARSENED_LEVEL : 0);
}

/** `outer` without `inner` (which lies within it) as at most four disjoint ranges. */
export function ringOf(outer: CellRange, inner: CellRange): CellRange[] {
  if (rangeIsEmpty(outer)) return [];
  if (rangeIsEmpty(inner)) return [outer];
  const { level } = outer;
  const parts: CellRange[] = [
    { level, x0: outer.x0, x1: outer.x1, y0: outer.y0, y1: inner.y0 - 1 },
    { level, x0: outer.x0, x1: outer.x1, y0: inner.y1 + 1, y1: outer.y1 },
    { level, x0: outer.x0, x1: inner.x0 - 1, y0: inner.y0, y1: inner.y1 },
    { level, x0: inner.x1 + 1, x1: outer.x1, y0: inner.y0, y1: inner.y1 },
  ];
  return parts.filter((part) => !rangeIsEmpty(part));
}

const children = (r: CellRange): CellRange => ({
  level: r.level + 1,
  x0: r.x0 * 2,
  x1: r.x1 * 2 + 1,
  y0: r.y0 * 2,
  y1: r.y1 * 2 + 1,
});

/**
 * The precomputed cells that add up to the part of a box made of whole cells: the inner cells of `level`, then, at
 * each finer level down to `finest`, the inner cells not already covered by the coarser ones (a ring at most one
 * cell thick per side). What is left — the box's partial cells at `finest` — is read from the libraries.
 */
export function coverOf(box: GeoBox, level: number, finest: number): CellRange[] {
  const cover: CellRange[] = [];
  let previous: CellRange | null = null;
  for (let l = level; l <= finest; l += 1) {
    const inner = innerCells(box, l);
    if (previous === null || rangeIsEmpty(previous)) {
      if (!rangeIsEmpty(inner)) cover.push(inner);
    } else {
      cover.push(...ringOf(inner, children(previous)));
    }
    previous = inner;
  }
  return cover;
}

/** The cell range of a tile at its grouping level (z + 1). */
export function tileCells(z: number, x: number, y: number): CellRange {
  const shift = TILE_CELL_SHIFT;
  return {
    level: z + 1,
    x0: x << shift,
    x1: (x << shift) + (1 << shift) - 1,
    y0: y << shift,
    y1: (y << shift) + (1 << shift) - 1,
  };
}

/** A tile's box in degrees (the grid's clamped outer rows reach the poles). */
export function tileBox(z: number, x: number, y: number): GeoBox {
  const n = 2 ** z;
  return {
    west: (x / n) * 360 - 180,
    east: ((x + 1) / n) * 360 - 180,
    north: y === 0 ? 90 : (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / n))) * 180) / Math.PI,
    south:
      y === n - 1 ? -90 : (Math.atan(Math.sinh(Math.PI * (1 - (2 * (y + 1)) / n))) * 180) / Math.PI,
  };
}
