import fc from 'fast-check';
import {
  cellOf,
  coverOf,
  feedLevel,
  innerCells,
  mapX,
  mapY,
  MAX_FEED_CELLS,
  mayCoarsen,
  normalizeBbox,
  rangeSize,
  touchedCells,
  type CellRange,
} from './map-grid.js';

describe('map grid', () => {
  it('normalises boxes: antimeridian, unwrapped longitudes, the whole world, clamped latitudes', () => {
    expect(normalizeBbox(13, 52, 14, 53)).toEqual([{ west: 13, south: 52, east: 14, north: 53 }]);
    expect(normalizeBbox(170, -20, -170, -10)).toEqual([
      { west: 170, south: -20, east: 180, north: -10 },
      { west: -180, south: -20, east: -170, north: -10 },
    ]);
    expect(normalizeBbox(170, -20, 190, -10)).toEqual(normalizeBbox(170, -20, -170, -10));
    expect(normalizeBbox(-190, 0, -170, 1)).toEqual([
      { west: 170, south: 0, east: 180, north: 1 },
      { west: -180, south: 0, east: -170, north: 1 },
    ]);
    expect(normalizeBbox(-500, -100, 500, 100)).toEqual([
      { west: -180, south: -90, east: 180, north: 90 },
    ]);
    expect(normalizeBbox(180, 0, 181, 1)).toEqual([{ west: -180, south: 0, east: -179, north: 1 }]);
  });

  it('puts the poles and the antimeridian into the outermost cells', () => {
    expect(cellOf(mapY(89.9), 3)).toBe(0);
    expect(cellOf(mapY(-89.9), 3)).toBe(31);
    expect(cellOf(mapX(180), 3)).toBe(31);
    expect(cellOf(mapX(-180), 3)).toBe(0);
    expect(innerCells({ west: 0, south: 80, east: 10, north: 89 }, 3).y0).toBeGreaterThan(0);
    expect(innerCells({ west: -180, south: -90, east: 180, north: 90 }, 3)).toEqual({
      level: 3,
      x0: 0,
      x1: 31,
      y0: 0,
      y1: 31,
    });
  });

  it('coarsens the grid of a box much larger than a screen, but not below ~76 m cells from zoom 18', () => {
    const berlin = normalizeBbox(13.3, 52.45, 13.5, 52.55);
    expect(feedLevel(berlin, 12)).toBe(12);
    const world = normalizeBbox(-180, -90, 180, 90);
    const level = feedLevel(world, 12)!;
    expect(level).toBeLessThan(12);
    expect(rangeSize(touchedCells(world[0], level))).toBeLessThanOrEqual(MAX_FEED_CELLS);
    expect(feedLevel(world, 18)).toBeNull();
    expect(feedLevel(normalizeBbox(13.4, 52.5, 13.403, 52.501), 20)).toBe(20);
    expect(feedLevel(normalizeBbox(13.4, 52.5, 13.42, 52.51), 20)).toBe(17);
    expect(feedLevel(normalizeBbox(13.4, 52.5, 13.44, 52.52), 20)).toBeNull();
  });

  it('covers exactly the whole cells of a box, each once (property)', () => {
    const coordinate = (min: number, max: number) =>
      fc.integer({ min: 0, max: 1_000_000 }).map((v) => min + ((max - min) * v) / 1_000_000);
    const box = fc
      .tuple(coordinate(-180, 180), coordinate(-90, 90), coordinate(0, 40), coordinate(0, 30))
      .map(([west, south, width, height]) => ({
        west,
        south,
        east: Math.min(180, west + width),
        north: Math.min(90, south + height),
      }));
    const finest = 10;
    fc.assert(
      fc.property(box, fc.integer({ min: 0, max: finest }), (b, level) => {
        const inner = innerCells(b, finest);
        const within = (r: CellRange) => {
          const shift = finest - r.level;
          return (
            r.x0 << shift >= inner.x0 &&
            ((r.x1 + 1) << shift) - 1 <= inner.x1 &&
            r.y0 << shift >= inner.y0 &&
            ((r.y1 + 1) << shift) - 1 <= inner.y1
          );
        };
        const cover = coverOf(b, level, finest);
        expect(cover.every(within)).toBe(true);
        const covered = cover.reduce((sum, r) => sum + rangeSize(r) * 4 ** (finest - r.level), 0);
        expect(covered).toBe(rangeSize(inner));
      }),
      { numRuns: 300 },
    );
  });

  it('coarsens a dense view down to level 0, and from zoom 18 not below level 17', () => {
    expect(mayCoarsen(0, 0)).toBe(false);
    expect(mayCoarsen(1, 1)).toBe(true);
    expect(mayCoarsen(13, 15)).toBe(true);
    expect(mayCoarsen(17, 17)).toBe(true);
    expect(mayCoarsen(17, 18)).toBe(false);
    expect(mayCoarsen(18, 18)).toBe(true);
    expect(mayCoarsen(17, 22)).toBe(false);
  });
});
