export interface GrowthPoint {
  period: string;
  cumulative_count: number;
}

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { top: 16, right: 16, bottom: 36, left: 56 };

const escapeXml = (text: string): string =>
  text.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** 0, a round step (1, 2 or 5 × 10ⁿ), … up to at least `max`: at most about five gridlines. */
export function niceTicks(max: number): number[] {
  if (max <= 0) return [0, 1];
  const rough = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough;
  const ticks: number[] = [];
  for (let value = 0; value < max + step; value += step) {
    ticks.push(Math.round(value));
    if (value >= max) break;
  }
  return ticks;
}

/**
 * The cumulative growth of approved libraries as an inline SVG (no script, no inline style, so the console's
 * Content-Security-Policy allows it). Every label is escaped; the numbers come from the statistics series.
 */
export function growthChartSvg(series: GrowthPoint[], caption: string): string {
  const title = escapeXml(caption);
  if (series.length === 0) {
    return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}"><title>${title}</title><text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" class="chart-empty">No approved libraries yet</text></svg>`;
  }
  const ticks = niceTicks(Math.max(...series.map((p) => p.cumulative_count)));
  const top = ticks[ticks.length - 1];
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) =>
    PAD.left + (series.length === 1 ? innerW / 2 : (i / (series.length - 1)) * innerW);
  const y = (value: number) => PAD.top + innerH - (value / top) * innerH;
  const fixed = (n: number) => n.toFixed(1);

  const grid = ticks
    .map(
      (tick) =>
        `<line class="chart-grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${fixed(y(tick))}" y2="${fixed(y(tick))}"/>` +
        `<text class="chart-label" x="${PAD.left - 8}" y="${fixed(y(tick) + 4)}" text-anchor="end">${tick.toLocaleString('en')}</text>`,
    )
    .join('');
  const points = series.map((p, i) => `${fixed(x(i))},${fixed(y(p.cumulative_count))}`);
  const area = `M${fixed(x(0))},${fixed(y(0))} L${points.join(' L')} L${fixed(x(series.length - 1))},${fixed(y(0))} Z`;
  const labelIndexes = [...new Set([0, Math.floor((series.length - 1) / 2), series.length - 1])];
  const labels = labelIndexes
    .map((i) => {
      const anchor = i === 0 ? 'start' : i === series.length - 1 ? 'end' : 'middle';
      return `<text class="chart-label" x="${fixed(x(i))}" y="${HEIGHT - 12}" text-anchor="${series.length === 1 ? 'middle' : anchor}">${escapeXml(series[i].period)}</text>`;
    })
    .join('');
  // Dots mark the points of short series (a single period would otherwise draw nothing).
  const dots =
    series.length <= 60
      ? series
          .map(
            (p, i) =>
              `<circle class="chart-dot" cx="${fixed(x(i))}" cy="${fixed(y(p.cumulative_count))}" r="3"/>`,
          )
          .join('')
      : '';
  const last = series[series.length - 1];
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}: ${last.cumulative_count.toLocaleString('en')} on ${escapeXml(last.period)}">` +
    `<title>${title}</title>${grid}` +
    `<path class="chart-area" d="${area}"/>` +
    `<polyline class="chart-line" fill="none" points="${points.join(' ')}"/>` +
    `${dots}${labels}</svg>`
  );
}
