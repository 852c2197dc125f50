/**
 * The page of a `search` alone is read one of two ways, chosen when its statement runs by the exact total (issue 22,
 * session 9): few matches in one scan of `libraries` (ranked and paged together, the name matches from the name's
 * trigram index), many by parts from library_search_tokens' bitmaps (each part walked or collected). A 4-digit postal
 * fragment (~1,000 matches at 1M) cost twice as much collected by parts. Each way, forced on the same rows, gives
 * plain SQL's total and order on every page; the list's own choice pages a rare substring from one scan and a common
 * one from the bitmaps; the statement is prepared and keeps its generic plan (planning it took 1.2–1.5 ms at 1M).
 */
import {
  countAndPagePrepared,
  countAndPageQuery,
  substringCountAndPageQuery,
  type SubstringRatios,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { expectPreparedAsFresh, genericPlans, nodesOf, type PlanNode } from '../support/plans.js';
import { plainSearch, sqlOn } from '../support/search-reference.js';
import { useTestSuite } from '../support/suite.js';

/** Whether the CTE `name` (`CTE c`: the bitmaps' OR per chunk; `CTE m`: the one scan) was read. */
const cteRan = (plan: PlanNode, name: string) => {
  const cte = nodesOf(plan).find((node) => node['Subplan Name'] === `CTE ${name}`);
  if (!cte) throw new Error(`no CTE ${name}`);
  return nodesOf(cte).some(
    (node) => node['Relation Name'] !== undefined && (node['Actual Loops'] ?? 0) > 0,
  );
};

const LONG = 'kobold'.repeat(75);
/**
 * Tokenized (3–100 folded characters, at most one space) and not; rare (a few matches) and common (most rows);
 * postal fragments; across two fields; accents both ways; LIKE metacharacters.
 */
const SEARCHES = [
  'kobold',
  'KÖBOLD',
  'bücher',
  'bucher',
  'straße',
  'strasse',
  'köln',
  'koln',
  '1011',
  '10110',
  '5066',
  '066',
  '0667',
  '100%',
  'snake_case',
  'lese_',
  'c:\\te',
  'kobold und',
  'kiste kobold',
  'straße 5',
  '5 50667',
  '5 1011',
  'quelle am',
  'ko½ld',
  'o½l',
  'zwerg',
  'nichtsdergleichen',
  LONG.slice(3, 103),
];

/** Each way of reading a `search` page: one scan; by parts, each collected; by parts, each walked. */
const WAYS: [string, SubstringRatios][] = [
  ['one scan', { bitmaps: 0, walk: 0 }],
  ['parts, collected', { bitmaps: 1e12, walk: 0 }],
  ['parts, walked', { bitmaps: 1e12, walk: 1e12 }],
];

describe('search alone: a page of few matches from one scan, of many by parts', () => {
  const { db } = useTestSuite({ app: false });
  const sql = sqlOn(db);

  beforeAll(async () => {
    // Ids across a chunk boundary (8,192 ids); 1 row in 40 with the postal code 10110 (rare), `kobold` in most.
    await sql(
      `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location,
                              status, created_at)
       SELECT 7900 + i, 'sub-' || i,
              (ARRAY['Bücherkobold ' || i, 'Straßenregal', 'Café 100% Bücher', 'Lese_Ecke', 'Back\\slash Kiste',
                     'Quelle  am Platz', 'Kobold'])[1 + i % 7],
              (ARRAY['Kobold und Zwerg.', 'Rabatt 50%', 'snake_case', 'C:\\temp', '', $1,
                     'Quelle am Platz'])[1 + i % 5 + i % 3],
              (ARRAY['Hauptstraße 5', 'Rue de l’Église 2', '', 'Ko½ld 7'])[1 + i % 4],
              (ARRAY['Köln', 'Koeln', 'Bern'])[1 + i % 4 % 3], 'DE',
              CASE WHEN i % 40 = 0 THEN '10110' ELSE (ARRAY['50667', '2011', 'AB_12', ''])[1 + i % 4] END,
              ST_SetSRID(ST_MakePoint(7, 51), 4326)::geography,
              CASE WHEN i % 6 = 0 THEN 'pending' WHEN i % 11 = 0 THEN 'rejected' ELSE 'approved' END,
              timestamptz '2024-01-01' + (i * 7919 % 400) * interval '1 hour'
       FROM generate_series(1, 700) AS i`,
      [LONG],
    );
    await sql('VACUUM ANALYZE libraries, library_search_tokens');
  });

  /** The approved libraries whose folded text holds `text`: name matches first, then newest first. */
  const expected = (text: string) => plainSearch(sql, text, 'id');

  it.each(WAYS)('%s: the total and order of plain SQL on every page', async (_way, ratios) => {
    for (const text of SEARCHES) {
      const want = await expected(text);
      for (const size of [50, 7]) {
        const last = Math.max(1, Math.ceil(want.length / size));
        for (const page of new Set([1, 2, Math.ceil(last / 2), last, last + 1])) {
          const statement = substringCountAndPageQuery(
            { search: text },
            null,
            size,
            (page - 1) * size,
            ratios,
          );
          const rows = statement
            ? await sql(statement.text, statement.params)
            : await sql(
                countAndPageQuery({ search: text }, null, size, (page - 1) * size).text,
                countAndPageQuery({ search: text }, null, size, (page - 1) * size).params,
              );
          expect([text, size, page, rows[0].total, rows.flatMap((r) => r.id ?? [])]).toEqual([
            text,
            size,
            page,
            want.length,
            want.slice((page - 1) * size, page * size),
          ]);
        }
      }
    }
  });

  it('pages a rare substring from one scan and a common one from the bitmaps', async () => {
    const analyze = async (text: string, offset = 0) => {
      const statement = countAndPageQuery({ search: text }, null, 20, offset);
      const [row] = await sql(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`, statement.params);
      return (row as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0].Plan;
    };
    /** The scans of libraries' trigram indexes that ran, and whether each ran inside the one scan (`CTE m`). */
    const textScans = (plan: PlanNode) => {
      const m = nodesOf(plan).find((node) => node['Subplan Name'] === 'CTE m');
      if (!m) throw new Error('no CTE m');
      const inM = new Set(nodesOf(m));
      return nodesOf(plan)
        .filter(
          (node) =>
            (node['Index Name'] === 'libraries_search_text_trgm_idx' ||
              node['Index Name'] === 'libraries_approved_name_trgm_idx') &&
            (node['Actual Loops'] ?? 0) > 0,
        )
        .map((node) => `${node['Index Name']}${inM.has(node) ? ' in m' : ''}`)
        .sort();
    };
    // 10110: 11 matches of 531, in the postal code (`5 1011`: across the address and the postal code). Counted from
    // the bitmaps (`c`), found in one scan, their name matches by the name's index (no name folded again).
    for (const text of ['1011', '10110', 'nichtsdergleichen', '5 1011']) {
      const plan = await analyze(text);
      const scans = textScans(plan);
      expect([
        text,
        cteRan(plan, 'c'),
        scans.includes('libraries_search_text_trgm_idx in m'),
      ]).toEqual([text, true, true]);
      // The name's index only for the rank, in the same scan (never run without a match).
      expect([text, scans.filter((scan) => !scan.endsWith(' in m'))]).toEqual([text, []]);
    }
    // A substring the tokens do not hold (no three letters or digits in a row once folded): counted by the scan.
    const untokenized = await analyze('o½l');
    expect([cteRan(untokenized, 'm'), cteRan(untokenized, 'c')]).toEqual([true, false]);
    // Most rows: counted from the bitmaps, the page walked; no scan of libraries' trigram indexes.
    for (const text of ['kobold', 'köln']) {
      const plan = await analyze(text);
      expect([text, cteRan(plan, 'm'), cteRan(plan, 'c'), textScans(plan)]).toEqual([
        text,
        false,
        true,
        [],
      ]);
    }
  });

  it('is prepared and keeps its generic plan, with the rows of an unprepared run', async () => {
    const texts = ['1011', 'kobold', 'straße 5', 'o½l', 'köln', '10110', 'zwerg', 'bücher'];
    await withClient(db.url, async (client) => {
      for (let i = 0; i < 12; i += 1) {
        const search = { search: texts[i % texts.length] };
        expect(countAndPagePrepared(search)).toBe(true);
        const statement = countAndPageQuery(search, i % 2 ? null : 1 + i, 20, (i % 3) * 20);
        const name = `search_${i % 2 ? 'anonymous' : 'reader'}`;
        await expectPreparedAsFresh(client, name, statement, i);
      }
      for (const name of ['search_anonymous', 'search_reader']) {
        expect([name, (await genericPlans(client, name)) > 0]).toEqual([name, true]);
      }
    });
  });
});
