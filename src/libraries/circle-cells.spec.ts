import { circleCells, FINEST_LEVEL, type CellRun } from './circle-cells.js';

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
});
