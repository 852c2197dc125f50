/**
 * The map's prepared statements keep PostgreSQL's generic plan (issue 22). Planned with their values, a tile's level
 * and cell range, a facet's country or photo state and the text filter's candidate arrays gave estimates that
 * differed from the generic plan's, so PostgreSQL planned every execution afresh: 0.4–0.5 ms for a tile that runs in
 * 0.1–0.4 ms, ~1 ms for a faceted feed view (at 1M libraries). These values are now opaque to the planner.
 *
 * MapRepository runs here on a reader that executes each prepared statement by name on one connection (as the
 * app's PreparedReader does) and also unprepared: the rows must be the same. PostgreSQL keeps planning afresh when
 * the custom plans (with the values) are estimated cheaper than the generic plan by more than its estimate of the
 * planning itself; on a few thousand libraries the gap is too small for that (it grows with the data), so each
 * execution's custom plan must not be estimated cheaper than the generic plan at all. Every statement text run at
 * least six times must also have been served by a generic plan.
 */
import type pg from 'pg';
import { addListConditions, type LibrarySearch, type Sql } from '../../src/libraries/list-query.js';
import type { LibrariesRepository } from '../../src/libraries/libraries.repository.js';
import { feedLevel, mayCoarsen, normalizeBbox } from '../../src/map/map-grid.js';
import { MapRepository } from '../../src/map/map.repository.js';
import { FakeClock } from '../support/clock.js';
import { withClient } from '../support/database.js';
import { insertSpreadLibraries } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const ROWS = 4000;
/** Estimated cost units a custom plan may save by folding constants the generic plan keeps as parameters. */
const COST_TOLERANCE = 0.01;
/** Executions of a statement text after which PostgreSQL has had its five custom plans and chosen. */
const SETTLED = 6;
/** The text filter's bound (the app's default is 5,000). */
const MAX_CANDIDATES = 100;

/** What MapRepository reads through: prepared statements by name on `client`, each also run unprepared. */
function preparingReader(client: pg.Client) {
  const names = new Map<string, string>();
  const runs = new Map<string, number>();
  const cheaperCustom: { name: string; custom: number; generic: number }[] = [];
  const reader = {
    async read<T>(text: string, params: unknown[], prepared: boolean): Promise<T[]> {
      const fresh = await client.query(text, params);
      if (!prepared) return fresh.rows as T[];
      let name = names.get(text);
      if (!name) names.set(text, (name = `map_${names.size + 1}`));
      runs.set(name, (runs.get(name) ?? 0) + 1);
      const result = await client.query({ name, text, values: params });
      const literals = params
        .map((value) =>
          value === null
            ? 'NULL'
            : `'${String(value as string | number | boolean).replace(/'/g, "''")}'`,
        )
        .join(', ');
      const cost = async (mode: string) => {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${literals})`,
        );
        await client.query('RESET plan_cache_mode');
        return rows[0]['QUERY PLAN'][0].Plan['Total Cost'];
      };
      const custom = await cost('force_custom_plan');
      const generic = await cost('force_generic_plan');
      if (custom < generic - COST_TOLERANCE) cheaperCustom.push({ name, custom, generic });
      expect(result.rows).toEqual(fresh.rows);
      return result.rows as T[];
    },
    addApprovedFilters(sql: Sql, search: Omit<LibrarySearch, 'near'>): void {
      addListConditions(sql, search, 'count');
    },
  };
  /** The names of the statements run at least SETTLED times that never got a generic plan. */
  const replanned = async (): Promise<string[]> => {
    const { rows } = await client.query<{ name: string; generic_plans: string }>(
      'SELECT name, generic_plans FROM pg_prepared_statements',
    );
    const generic = new Map(rows.map((row) => [row.name, Number(row.generic_plans)]));
    return [...runs]
      .filter(([name, count]) => count >= SETTLED && !generic.get(name))
      .map(([name]) => name);
  };
  const settled = () => [...runs.values()].filter((count) => count >= SETTLED).length;
  const preparedTexts = () => [...names.keys()];
  return {
    reader: reader as unknown as LibrariesRepository,
    replanned,
    settled,
    cheaperCustom,
    preparedTexts,
  };
}

describe('map statements keep their generic plan', () => {
  const { db } = useTestSuite({ app: false });

  beforeAll(async () => {
    await insertSpreadLibraries(db.url, ROWS, { prefix: 'plan', west: 5, south: 45, span: 10 });
    await withClient(db.url, async (client) => {
      // Countries of very different sizes, as in the real data (their frequencies are what a custom plan sees).
      await client.query(`UPDATE libraries SET country = 'DE' WHERE id % 10 < 8`);
      await client.query('VACUUM ANALYZE libraries, library_map_cells');
    });
  });

  it('tiles of the precomputed levels', async () => {
    await withClient(db.url, async (client) => {
      const { reader, replanned, settled, cheaperCustom } = preparingReader(client);
      const map = new MapRepository(reader, new FakeClock());
      for (const z of [4, 7, 10, 13]) {
        // Neighbouring tiles: the same text, other ranges.
        const n = 2 ** z;
        const x0 = Math.floor(((10 + 180) / 360) * n);
        const y0 = Math.floor(
          (0.5 - Math.log(Math.tan(Math.PI / 4 + (50 * Math.PI) / 360)) / (2 * Math.PI)) * n,
        );
        for (let i = 0; i < 8; i += 1) await map.findTileMvt(z, x0 + (i % 3), y0 + (i % 2));
      }
      expect(settled()).toBeGreaterThan(0);
      expect(cheaperCustom).toEqual([]);
      expect(await replanned()).toEqual([]);
    });
  });

  it.each<[string, { country?: string; hasPhoto?: boolean; postalCode?: string }, string]>([
    // A small country (the custom plan sees its low frequency); lower case as a client may send it.
    ['country', { country: 'fr' }, 'c.country ='],
    ['has_photo', { hasPhoto: true }, 'c.has_photo ='],
    ['country and has_photo', { country: 'AT', hasPhoto: false }, 'c.has_photo ='],
    // Few matches anywhere, more libraries than MAX_CANDIDATES in each view: the view is grouped from the candidates.
    ['a text filter (candidates)', { postalCode: '1234' }, 'AS p(id, lng, lat)'],
  ])('feed views with %s', async (_name, filters, shape) => {
    await withClient(db.url, async (client) => {
      const { reader, replanned, settled, cheaperCustom, preparedTexts } = preparingReader(client);
      const map = new MapRepository(reader, new FakeClock());
      // Views of several sizes and places at one zoom, so the statements' shapes repeat with other values.
      for (let i = 0; i < 10; i += 1) {
        const west = 5 + (i % 5) * 1.3;
        const south = 45 + (i % 4) * 1.1;
        const boxes = normalizeBbox(west, south, west + 2 + (i % 3), south + 1.5);
        const level = feedLevel(boxes, 8)!;
        await map.findFeedCells(boxes, level, filters, MAX_CANDIDATES, mayCoarsen(level, 8));
      }
      expect(preparedTexts().some((text) => text.includes(shape))).toBe(true);
      expect(settled()).toBeGreaterThan(0);
      expect(cheaperCustom).toEqual([]);
      expect(await replanned()).toEqual([]);
    });
  });
});
