import { circleCells, circleCover, FINEST_LEVEL, type CellRun } from './circle-cells.js';
import { sphereBounds } from './near-box.js';

const RADIANS = Math.PI / 180;

/** Great-circle distance (m) on the sphere of the mean radius, as circle-cells.ts measures. */
function sphereDistance(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const h =
    Math.sin(((lat2 - lat1) * RADIANS) / 2) ** 2 +
    Math.cos(lat1 * RADIANS) *
      Math.cos(lat2 * RADIANS) *
      Math.sin(((lng2 - lng1) * RADIANS) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Whether a point lies in one of the runs' cells (the grid's Web Mercator cells, bookcase_map_cell). */
function inRuns(runs: CellRun[], lat: number, lng: number): boolean {
  const x = (lng + 180) / 360;
  const y = 0.5 - Math.log(Math.tan(Math.PI / 4 + (lat * RADIANS) / 2)) / (2 * Math.PI);
  return runs.some(({ level, cy, x0, x1 }) => {
    const across = 2 ** (level + 2);
    const cx = Math.floor(x * across);
    return Math.floor(y * across) === cy && cx >= x0 && cx <= x1;
  });
}

/** The finest cells of a run set (inside runs of coarser levels expanded to their descendants). */
function finestCells(runs: CellRun[]): Set<string> {
  const cells = new Set<string>();
  for (const { level, cy, x0, x1 } of runs) {
    const scale = 2 ** (FINEST_LEVEL - level);
    for (let cx = x0; cx <= x1; cx++)
      for (let y = cy * scale; y < (cy + 1) * scale; y++)
        for (let x = cx * scale; x < (cx + 1) * scale; x++) cells.add(`${x},${y}`);
  }
  return cells;
}

describe('circleCells', () => {
  it.each([
    ['Berlin 5 km', 52.52, 13.405, 5000],
    ['Sydney 2 km', -33.87, 151.21, 2000],
    ['Quito 1 km', -0.2, -78.5, 1000],
  ])(
    '%s: inside and edge cells never overlap, and the edge is finer than the inside',
    (_, lat, lng, r) => {
      const cells = circleCells(lat, lng, r);
      expect(cells).not.toBeNull();
      const { inside, edge, edgeLevel } = cells!;
      expect(inside.length).toBeGreaterThan(0);
      expect(edge.every((run) => run.level === edgeLevel)).toBe(true);
      expect(inside.every((run) => run.level <= edgeLevel)).toBe(true);
      const insideCells = finestCells(inside);
      const edgeCells = finestCells(edge);
      for (const cell of edgeCells) expect(insideCells.has(cell)).toBe(false);
      // Runs of a row are maximal: two runs of one row and level never touch.
      for (const list of [inside, edge])
        for (let i = 1; i < list.length; i++) {
          const [a, b] = [list[i - 1], list[i]];
          if (a.level === b.level && a.cy === b.cy) expect(b.x0).toBeGreaterThan(a.x1 + 1);
        }
    },
  );

  it('declines small circles, poles, Mercator’s limit and the antimeridian', () => {
    expect(circleCells(52.52, 13.405, 300)).toBeNull();
    expect(circleCells(88.6, 15.6, 100_000)).toBeNull();
    expect(circleCells(84.5, 15.6, 50_000)).toBeNull();
    expect(circleCells(-16.5, 179.98, 10_000)).toBeNull();
  });

  it('tests the edge at a coarser level for larger circles', () => {
    expect(circleCells(52.52, 13.405, 5000)!.edgeLevel).toBeGreaterThan(
      circleCells(52.52, 13.405, 50_000)!.edgeLevel,
    );
  });

  it.each([
    ['Berlin 5 km', 52.52, 13.405, 5000],
    ['Paris 25 km', 48.85, 2.35, 25_000],
    ['Madrid 2 km', 40.4, -3.7, 2000],
    ['Sydney 50 km', -33.87, 151.21, 50_000],
  ])(
    '%s: every edge cell reaches into the band of the radius, and every point of the band is in an edge cell',
    (_, lat, lng, r) => {
      const { edge, inside } = circleCells(lat, lng, r)!;
      // The spheroid's bounds around the circle (sphereBounds): within `near` of the centre on the sphere a point is
      // inside the radius, beyond `far` outside; between the two it is tested library by library.
      const { shortest, longest } = sphereBounds(lat, lng, r);
      const near = (r - 1) / longest;
      const far = (r + 1) / shortest;
      const steps = 12;
      for (const run of edge) {
        const width = (run.east - run.west) / (run.x1 - run.x0 + 1);
        for (let i = 0; i <= run.x1 - run.x0; i++) {
          let nearest = Infinity;
          for (let a = 0; a <= steps; a++)
            for (let b = 0; b <= steps; b++) {
              const pLat = run.south + ((run.north - run.south) * a) / steps;
              const pLng = run.west + width * (i + b / steps);
              nearest = Math.min(nearest, sphereDistance(lat, lng, pLat, pLng));
            }
          // No cell wholly beyond the band is tested (its libraries would all be read for nothing); the sampling
          // misses the nearest point by less than a step.
          const step = sphereDistance(run.south, run.west, run.north, run.west + width) / steps;
          expect(nearest).toBeLessThanOrEqual(far + step);
        }
      }
      // Points on and around the band, at every bearing: in an edge cell or an inside cell, never left out.
      for (let k = 0; k < 1440; k++) {
        const bearing = (k / 4) * RADIANS;
        for (const f of [0.99, 0.995, 1, 1.004, 1.008]) {
          const d = (r * f) / 6_371_008.8;
          const pLat = Math.asin(
            Math.sin(lat * RADIANS) * Math.cos(d) +
              Math.cos(lat * RADIANS) * Math.sin(d) * Math.cos(bearing),
          );
          const pLng =
            lng * RADIANS +
            Math.atan2(
              Math.sin(bearing) * Math.sin(d) * Math.cos(lat * RADIANS),
              Math.cos(d) - Math.sin(lat * RADIANS) * Math.sin(pLat),
            );
          const distance = sphereDistance(lat, lng, pLat / RADIANS, pLng / RADIANS);
          if (distance > far) continue;
          const counted = inRuns(edge, pLat / RADIANS, pLng / RADIANS);
          const summed = inRuns(inside, pLat / RADIANS, pLng / RADIANS);
          expect({ counted, summed, band: distance > near }).toEqual(
            distance > near
              ? { counted: true, summed: false, band: true }
              : { counted: expect.any(Boolean), summed: !counted, band: false },
          );
        }
      }
    },
  );
});

/**
 * circleCells' cells computed the plain way (session 11's code, before the corners were shared between levels and
 * kept in typed arrays): every cell from the cover down classified on its own, its corners' and nearest point's
 * distances from sphereDistance, the runs sorted at the end. circleCells must give exactly these runs.
 */
function plainCells(lat: number, lng: number, r: number) {
  const found = circleCover(lat, lng, r);
  if (!found) return null;
  const { shortest, longest } = sphereBounds(lat, lng, r);
  const across = (level: number) => 2 ** (level + 2);
  const west = (cx: number, level: number) => (cx / across(level)) * 360 - 180;
  const north = (cy: number, level: number) =>
    Math.atan(Math.sinh(Math.PI * (1 - (2 * cy) / across(level)))) / RADIANS;
  const nearest = (level: number, cx: number, cy: number) => {
    const [w, e, n, s] = [
      west(cx, level),
      west(cx + 1, level),
      north(cy, level),
      north(cy + 1, level),
    ];
    if (lng >= w && lng <= e)
      return 6_371_008.8 * Math.abs(Math.min(Math.max(lat, s), n) - lat) * RADIANS;
    const meridian = lng < w ? w : e;
    const foot =
      Math.atan2(
        Math.sin(lat * RADIANS),
        Math.cos(lat * RADIANS) * Math.cos((meridian - lng) * RADIANS),
      ) / RADIANS;
    return sphereDistance(lat, lng, Math.min(Math.max(foot, s), n), meridian);
  };
  const inside: { level: number; cx: number; cy: number }[] = [];
  const edge: { level: number; cx: number; cy: number }[] = [];
  let pending = found.cover.flatMap(({ cy, x0, x1 }) =>
    Array.from({ length: x1 - x0 + 1 }, (_, i) => ({ cx: x0 + i, cy })),
  );
  for (let level = found.start; level <= found.edgeLevel; level++) {
    const next: { cx: number; cy: number }[] = [];
    for (const { cx, cy } of pending) {
      const far = Math.max(
        ...[
          [cx, cy],
          [cx + 1, cy],
          [cx, cy + 1],
          [cx + 1, cy + 1],
        ].map(([x, y]) => sphereDistance(lat, lng, north(y, level), west(x, level))),
      );
      if (far * longest + 1 <= r) inside.push({ level, cx, cy });
      else if (nearest(level, cx, cy) * shortest > r + 1) continue;
      else if (level === found.edgeLevel) edge.push({ level, cx, cy });
      else
        for (const [dx, dy] of [
          [0, 0],
          [1, 0],
          [0, 1],
          [1, 1],
        ])
          next.push({ cx: cx * 2 + dx, cy: cy * 2 + dy });
    }
    pending = next;
  }
  const runs = (cells: { level: number; cx: number; cy: number }[]) => {
    const out: CellRun[] = [];
    for (const { level, cx, cy } of [...cells].sort(
      (a, b) => a.level - b.level || a.cy - b.cy || a.cx - b.cx,
    )) {
      const last = out.at(-1);
      if (last && last.level === level && last.cy === cy && last.x1 === cx - 1) last.x1 = cx;
      else out.push({ level, cy, x0: cx, x1: cx });
    }
    return out;
  };
  return { inside: runs(inside), edge: runs(edge), edgeLevel: found.edgeLevel };
}

describe('circleCells against the plain computation', () => {
  it('gives the same runs for 400 random circles of 300 m to 100 km', () => {
    let seed = 22;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    let compared = 0;
    for (let i = 0; i < 400; i++) {
      const lat = Number((-70 + random() * 140).toFixed(5));
      const lng = Number((-179 + random() * 358).toFixed(5));
      const r = [1000, 2000, 5000, 10_000, 25_000, 50_000, 300 + random() * 100_000][
        Math.floor(random() * 7)
      ];
      const plain = plainCells(lat, lng, r);
      const cells = circleCells(lat, lng, r);
      if (plain) compared += 1;
      expect(
        cells && {
          inside: cells.inside,
          edge: cells.edge.map(({ level, cy, x0, x1 }) => ({ level, cy, x0, x1 })),
          edgeLevel: cells.edgeLevel,
        },
      ).toEqual(plain);
    }
    expect(compared).toBeGreaterThan(350);
  });
});
