import { growthChartSvg, niceTicks } from './growth-chart.js';

describe('niceTicks', () => {
  it.each([
    [0, [0, 1]],
    [3, [0, 1, 2, 3]],
    [7, [0, 2, 4, 6, 8]],
    [95, [0, 50, 100]],
    [1234, [0, 500, 1000, 1500]],
  ])('covers %d with round steps', (max, ticks) => {
    expect(niceTicks(max)).toEqual(ticks);
  });
});

describe('growthChartSvg', () => {
  const series = [
    { period: '2026-09-01', cumulative_count: 2 },
    { period: '2026-10-01', cumulative_count: 5 },
    { period: '2026-11-01', cumulative_count: 9 },
  ];

  it('draws one point per period, the last value in the accessible label', () => {
    const svg = growthChartSvg(series, 'Approved libraries');
    expect(svg.startsWith('<svg class="chart"')).toBe(true);
    expect(svg).toContain('role="img"');
    expect(svg).toContain('aria-label="Approved libraries: 9 on 2026-11-01"');
    const points = /<polyline[^>]* points="([^"]+)"/.exec(svg)![1].split(' ');
    expect(points).toHaveLength(3);
    const ys = points.map((p) => Number(p.split(',')[1]));
    expect(ys[0]).toBeGreaterThan(ys[1]);
    expect(ys[1]).toBeGreaterThan(ys[2]);
    expect(svg).toContain('>2026-09-01</text>');
    expect(svg).toContain('>2026-11-01</text>');
  });

  it('uses no inline style or script (the console CSP forbids them) and escapes its text', () => {
    const svg = growthChartSvg(series, 'A <b>"quoted"</b> caption');
    expect(svg).not.toMatch(/style=|<script/);
    expect(svg).toContain('A &lt;b&gt;&quot;quoted&quot;&lt;/b&gt; caption');
  });

  it('says so when there is nothing to draw, and centres a single period', () => {
    expect(growthChartSvg([], 'Empty')).toContain('No approved libraries yet');
    const one = growthChartSvg([{ period: '2026-11-21', cumulative_count: 1 }], 'One');
    expect(/<polyline[^>]* points="([^"]+)"/.exec(one)![1]).toMatch(/^340\.0,/);
    expect(one).toContain('<circle class="chart-dot" cx="340.0"');
  });
});
