/**
 * The prepared list statements (worthPreparing: no text filter) are served by PostgreSQL's generic plan after their
 * first five executions (issue 22). With the page's offset as a bare parameter, every custom plan looked cheaper than
 * the generic one and the default list was planned on every request (0.2–0.35 ms at 1M, more than running it).
 * Each list below is prepared as the app prepares it, run with different pages and readers, and must have kept
 * the generic plan, with the rows a fresh unprepared run gives.
 */
import {
  countAndPagePrepared,
  circleGridCountAndPageQuery,
  countAndPageQuery,
  pageQuery,
  worthPreparing,
  type LibrarySearch,
} from '../../src/libraries/list-query.js';
import { withClient } from '../support/database.js';
import { expectPreparedAsFresh, genericPlans } from '../support/plans.js';
import { insertSpreadLibraries } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const ROWS = 3000;
const EXECUTIONS = 12;
/**
 * The countries a list with `country` is run with, one per execution: a third of the libraries each for the first
 * three, a few for the last (inserted below), so a custom plan that saw the country would choose by its size, as at
 * 1M (DE a third of the libraries, DK 1 %).
 */
const COUNTRIES = ['DE', 'DK', 'AT', 'DK', 'FR', 'DK'];

const LISTS: [string, LibrarySearch][] = [
  ['the default list', {}],
  ['country', { country: 'DE' }],
  ['has_photo', { hasPhoto: true }],
  ['has_photo=false', { hasPhoto: false }],
  ['country and has_photo', { country: 'DE', hasPhoto: true }],
  ['country and has_photo=false', { country: 'DE', hasPhoto: false }],
  ['nearest first', { near: { lat: 50, lng: 10 } }],
  ['a small circle', { near: { lat: 50, lng: 10, radiusMeters: 300 } }],
];
/**
 * One place filter (placeCountAndPageQuery, prepared too: countAndPagePrepared), run with the next text of its list
 * at each execution: one and two characters (counted from library_place_grams), longer ones (the trigram index), with
 * and without matches.
 */
const PLACE_LISTS: [string, LibrarySearch, string[]][] = [
  ['city', {}, ['ber', 'wi', 'LYON', 'b', 'købe', 'nothing']],
  ['city with country and has_photo', { country: 'DE', hasPhoto: true }, ['erl', 'n', 'ber']],
  ['postal_code', {}, ['1', '12', '123', '05', '0042', '9']],
  [
    'postal_code with country and has_photo=false',
    { country: 'AT', hasPhoto: false },
    ['12', '1', '105', '7'],
  ],
];

/**
 * Circles larger than a few of the grid's finest cells, at varying centres and radii: their count and page together
 * carry the coarse cover's cells as arrays and the box around the circle, and the grid's statement
 * (circleGridCountAndPageQuery) the cells inside and on the edge. With those as bare parameters every custom plan
 * (array lengths and box known) looked cheaper than the generic one, so both were planned on every request.
 */
const CIRCLES: [string, (i: number) => LibrarySearch][] = [
  ['a circle', (i) => ({ near: { lat: 49.5 + i / 50, lng: 9.5 + i / 40, radiusMeters: 20_000 } })],
  [
    'circles of several radii with country and has_photo',
    (i) => ({
      near: { lat: 50 - i / 60, lng: 10, radiusMeters: [5000, 10_000, 25_000, 50_000][i % 4] },
      country: 'DE',
      hasPhoto: true,
    }),
  ],
];
const LARGER_CIRCLE: LibrarySearch = CIRCLES[0][1](0);

describe('prepared list statements keep their generic plan', () => {
  const { db } = useTestSuite({ app: false });

  beforeAll(async () => {
    await insertSpreadLibraries(db.url, ROWS, {
      prefix: 'cache',
      west: 8,
      south: 48,
      span: 4,
      pendingEvery: 10,
    });
    await withClient(db.url, async (client) => {
      await client.query(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status,
                                photo_key, created_at)
         SELECT 'cache-dk-' || i, 'Reol ' || i, '', '', 'København', 'DK', '1050',
                ST_SetSRID(ST_MakePoint(12.5 + i * 0.001, 55.6), 4326)::geography, 'approved',
                CASE WHEN i % 5 > 0 THEN 'photos/dk-' || i || '.jpg' END, timestamptz '2024-01-01' + i * interval '1 hour'
         FROM generate_series(1, 40) AS i`,
      );
      await client.query('VACUUM ANALYZE libraries');
    });
  });

  /** The search of execution `i`: a list with `country` takes the next country of COUNTRIES. */
  const varied = (search: LibrarySearch, i: number): LibrarySearch =>
    search.country ? { ...search, country: COUNTRIES[i % COUNTRIES.length] } : search;

  it.each(LISTS)('%s: count and page', async (_name, search) => {
    expect(worthPreparing(search)).toBe(true);
    await withClient(db.url, async (client) => {
      // Two statements, so three times as many executions for each to reach its generic plan.
      for (let i = 0; i < (search.near ? 1 : 3) * EXECUTIONS; i += 1) {
        const offset = (i % 3) * 20;
        const userId = i % 2 ? null : 1 + i;
        const statement = countAndPageQuery(varied(search, i), userId, 20, offset);
        // Without a place, text or proximity filter, a first page and the pages after it are two statements
        // (newestCountAndPage walks the latter).
        const kind = !search.near && offset > 0 ? '_after' : '';
        await expectPreparedAsFresh(
          client,
          `list_${userId === null ? 'anonymous' : 'reader'}${kind}`,
          statement,
        );
      }
      expect(await genericPlans(client, 'list_anonymous')).toBeGreaterThan(0);
      expect(await genericPlans(client, 'list_reader')).toBeGreaterThan(0);
      if (!search.near) {
        expect(await genericPlans(client, 'list_anonymous_after')).toBeGreaterThan(0);
        expect(await genericPlans(client, 'list_reader_after')).toBeGreaterThan(0);
      }
    });
  });

  it.each(PLACE_LISTS)('%s: count and page', async (name, search, texts) => {
    await withClient(db.url, async (client) => {
      for (let i = 0; i < EXECUTIONS; i += 1) {
        const text = texts[i % texts.length];
        const place = name.startsWith('city') ? { city: text } : { postalCode: text };
        const listed = varied({ ...search, ...place }, i);
        expect(countAndPagePrepared(listed)).toBe(true);
        const statement = countAndPageQuery(listed, i % 2 ? null : 1 + i, 10, (i % 3) * 10);
        await expectPreparedAsFresh(
          client,
          `place_${i % 2 ? 'anonymous' : 'reader'}`,
          statement,
          text,
        );
      }
      expect(await genericPlans(client, 'place_anonymous')).toBeGreaterThan(0);
      expect(await genericPlans(client, 'place_reader')).toBeGreaterThan(0);
    });
  });

  it.each(CIRCLES)('%s: count and page, and the grid’s count and page', async (_name, circle) => {
    await withClient(db.url, async (client) => {
      for (let i = 0; i < EXECUTIONS; i += 1) {
        const search = circle(i);
        expect(worthPreparing(search)).toBe(true);
        for (const [name, statement] of [
          ['circle', countAndPageQuery(search, null, 20, (i % 3) * 20)],
          ['grid', circleGridCountAndPageQuery(search, null, 20, (i % 3) * 20)!],
        ] as const)
          await expectPreparedAsFresh(client, name, statement);
      }
      expect(await genericPlans(client, 'circle')).toBeGreaterThan(0);
      expect(await genericPlans(client, 'grid')).toBeGreaterThan(0);
    });
  });

  it.each([...LISTS, ['a larger circle', LARGER_CIRCLE] as const])(
    '%s: page alone (after a memoised count)',
    async (_name, search) => {
      await withClient(db.url, async (client) => {
        for (let i = 0; i < (search.near ? 1 : 3) * EXECUTIONS; i += 1) {
          const offset = (i % 3) * 20;
          await expectPreparedAsFresh(
            client,
            !search.near && offset > 0 ? 'page_after' : 'page',
            pageQuery(varied(search, i), null, 20, offset),
          );
        }
        expect(await genericPlans(client, 'page')).toBeGreaterThan(0);
        if (!search.near) expect(await genericPlans(client, 'page_after')).toBeGreaterThan(0);
      });
    },
  );
});
