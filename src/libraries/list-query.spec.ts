import {
  byIdsQuery,
  circleGridCountAndPageQuery,
  countAndPagePrepared,
  countAndPageQuery,
  countQuery,
  countsFromAggregate,
  isRanked,
  likeEscape,
  pageIdsQuery,
  pageQuery,
  searchWords,
  substringPageWindow,
  worthPreparing,
  type LibrarySearch,
  type Statement,
} from './list-query.js';

/** Placeholders used by a statement, in order of first use: each must be a parameter, and each parameter used. */
function placeholders(statement: Statement): number[] {
  return [...new Set([...statement.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))];
}

/** A statement as its snapshot pins it: the arrays of a circle's grid cells by their length (circle-cells.spec.ts). */
function pinned(statement: Statement): Statement {
  return {
    ...statement,
    params: statement.params.map((p) => (Array.isArray(p) ? `${p.length} values` : p)),
  };
}

function expectConsistent(statement: Statement): void {
  const used = placeholders(statement).sort((a, b) => a - b);
  expect(used).toEqual(statement.params.map((_, i) => i + 1));
}

/** The shapes the list sends; the committed snapshots (__snapshots__/list-query.spec.ts.snap) pin their SQL. */
const SHAPES: Record<string, LibrarySearch> = {
  default: {},
  country: { country: 'de' },
  'has_photo=true': { hasPhoto: true },
  'has_photo=false + country': { hasPhoto: false, country: 'AT' },
  city: { city: 'Ber_lin%' },
  postal_code: { postalCode: '10' },
  q: { q: 'Bücher Schrank' },
  'q without words': { q: '!!!' },
  search: { search: '1043' },
  'search + country': { search: '1043', country: 'de' },
  'near, no radius': { near: { lat: 52.52, lng: 13.4 } },
  'near with radius': { near: { lat: 52.52, lng: 13.4, radiusMeters: 5000 } },
  'near with radius at a pole': { near: { lat: 89.9, lng: 0, radiusMeters: 100_000 } },
  'near + q + country': {
    near: { lat: 48.2, lng: 16.37, radiusMeters: 2000 },
    q: 'buch',
    country: 'at',
  },
};

describe('list-query', () => {
  describe.each(Object.entries(SHAPES))('%s', (_name, search) => {
    it('count', () => {
      const statement = countQuery(search);
      expectConsistent(statement);
      expect(pinned(statement)).toMatchSnapshot();
    });

    it('page (anonymous and signed in)', () => {
      const anonymous = pageQuery(search, null, 20, 40);
      const signedIn = pageQuery(search, 7, 20, 40);
      expectConsistent(anonymous);
      expectConsistent(signedIn);
      expect(anonymous.params.slice(-2)).toEqual([20, 40]);
      expect(signedIn.params).toContain(7);
      expect(anonymous.text).toContain('false AS is_favourited');
      expect(signedIn).toMatchSnapshot();
    });

    it('count and page in one statement', () => {
      const statement = countAndPageQuery(search, 7, 20, 0);
      expectConsistent(statement);
      expect(statement.params.slice(-2)).toEqual([20, 0]);
      expect(pinned(statement)).toMatchSnapshot();
    });
  });

  it('reads the count of the default, country and has_photo lists from library_country_counts only', () => {
    for (const search of [
      {},
      { country: 'DE' },
      { hasPhoto: true },
      { hasPhoto: false, country: 'DE' },
      // Nearest first without a radius filters nothing.
      { near: { lat: 1, lng: 1 }, country: 'DE' },
    ]) {
      expect(countsFromAggregate(search)).toBe(true);
      expect(countQuery(search).text).toContain('library_country_counts');
      expect(countQuery(search).text).not.toMatch(/FROM libraries l\s*(WHERE|$)/);
    }
    for (const search of [
      { q: 'x' },
      { search: 'x' },
      { city: 'x', q: 'y' },
      { postalCode: '1', near: { lat: 1, lng: 1 } },
      { near: { lat: 1, lng: 1, radiusMeters: 1000 } },
    ]) {
      expect(countsFromAggregate(search)).toBe(false);
      expect(countQuery(search).text).not.toContain('library_country_counts');
      expect(countQuery(search).text).not.toMatch(
        /library_(city|postal_code)_counts|library_place_grams/,
      );
    }
  });

  it('reads the count of one place filter (with country, has_photo) from the place counts only', () => {
    for (const [search, table] of [
      [{ city: 'Ber' }, 'library_city_counts'],
      [{ city: 'Ber', country: 'de', hasPhoto: false }, 'library_city_counts'],
      [{ postalCode: '10' }, 'library_postal_code_counts'],
      [{ postalCode: '101', hasPhoto: true }, 'library_postal_code_counts'],
    ] as const) {
      expect(countsFromAggregate(search)).toBe(true);
      const { text } = countQuery(search);
      expect(text).toContain(table);
      expect(text).toContain('library_place_grams');
      expect(text).not.toMatch(/FROM libraries l\s*(WHERE|$)/);
      // The page: the walk newest first or the newest of each matching value, chosen on the total.
      const page = countAndPageQuery(search, null, 20, 40).text;
      expect(page).toContain(`FROM ${table} v`);
      // The walk's budget: 5,000 entries (1,500 in a country, whose matching values are read by index; 300 for a
      // city, whose few large values cost a probe each), or about what the values' newest rows would read if more.
      const floor = 'city' in search ? 300 : 'country' in search ? 1500 : 5000;
      expect(
        page.match(
          new RegExp(
            `<= t\\.total::float8 \\* greatest\\(${floor}, t\\.total \\* least\\(1, `,
            'g',
          ),
        ),
      ).toHaveLength(2);
      expect(page).toContain(`'${table}'::regclass`);
    }
  });

  it('counts both places from their pairs, and pages from the same pairs or a walk, prepared', () => {
    for (const search of [
      { city: 'Ber', postalCode: '10', country: 'de', hasPhoto: true },
      { city: 'Ber', postalCode: '10' },
    ]) {
      expect(countsFromAggregate(search)).toBe(true);
      expect(countAndPagePrepared(search)).toBe(true);
      const count = countQuery(search);
      expectConsistent(count);
      expect(count.text).toContain('library_place_pairs');
      expect(count.text).not.toMatch(/FROM libraries l\s*(WHERE|$)/);
      const page = countAndPageQuery(search, 7, 20, 40);
      expectConsistent(page);
      expect(page.text).toContain('pairs AS MATERIALIZED');
      // The choice between the places once (a CTE), read by both branches of the pairs.
      expect(page.text).toContain('WITH drives AS MATERIALIZED');
      expect(page.text.match(/FROM drives d/g)).toHaveLength(2);
      // Every value is a one-row subquery (the reader's id aside): one plan for all of them.
      const hidden = page.text
        .replace(/\(SELECT \$\d+::[a-z0-9()]+\)/g, '')
        .replace(/f\.user_id = \$\d+/, '');
      expect(hidden).not.toMatch(/\$\d+/);
      expect(page.text).toMatch(
        /LIMIT least\(\(SELECT \$\d+::int\)::int, greatest\(t\.total - \(SELECT \$\d+::int\)::int, 0\)\)/,
      );
    }
  });

  it('reads a place filter’s page alone (past the end) with its count-and-page statement, prepared', () => {
    for (const [search, table] of [
      [{ city: 'Ber', country: 'gb' }, 'library_city_counts'],
      [{ postalCode: '97', country: 'gb' }, 'library_postal_code_counts'],
      [{ city: 'Mil', postalCode: '78', hasPhoto: true }, 'library_place_pairs'],
    ] as const) {
      const page = pageQuery(search, 7, 20, 100);
      expectConsistent(page);
      expect(page.text).toMatch(/^SELECT c\.\* FROM \(/);
      expect(page.text).toContain(table);
      expect(page.text).toMatch(/WHERE c\.id IS NOT NULL$/);
      expect(page.params).toEqual(countAndPageQuery(search, 7, 20, 100).params);
      expect(countAndPagePrepared(search)).toBe(true);
    }
  });

  it('reads no more rows for the page than the count found past the offset', () => {
    for (const search of [{}, { near: { lat: 1, lng: 1, radiusMeters: 200 } }, { city: 'x' }]) {
      const { text } = countAndPageQuery(search, null, 20, 40);
      expect(text).toMatch(/LEFT JOIN LATERAL/);
      expect(text).toMatch(
        /LIMIT least\((\$\d+::int|\(SELECT \$\d+::int\)::int), greatest\(t\.total - (\$\d+::int|\(SELECT \$\d+::int\)(::int)?), 0\)\)/,
      );
    }
    // A circle the grid may count: nothing while the total is NULL (circleGridCountAndPageQuery reads the page).
    const { text } = countAndPageQuery(
      { near: { lat: 1, lng: 1, radiusMeters: 5000 } },
      null,
      20,
      40,
    );
    expect(text).toMatch(
      /LIMIT least\(\$\d+::int, greatest\(coalesce\(t\.total, 0\) - \(SELECT \$\d+::int\), 0\)\)/,
    );
  });

  it('sends a circle’s grid cells only in the grid’s own count, never with the page', () => {
    const arrays = (statement: Statement) =>
      statement.params.filter((p): p is unknown[] => Array.isArray(p));
    for (const radiusMeters of [1000, 5000, 25_000, 50_000]) {
      const search = { near: { lat: 52.52, lng: 13.4, radiusMeters }, hasPhoto: true };
      // The page's statement holds the few coarse cells around the circle (one run per row) and no grid cell.
      const page = countAndPageQuery(search, null, 20, 0);
      expectConsistent(page);
      expect(page.text).toContain('THEN (SELECT count(*) FROM libraries l');
      expect(page.text).toMatch(/true\)\)\)\) END\)::int AS total OFFSET 0\) t/);
      expect(page.text).not.toMatch(/float8\[\]|bookcase_map_cell/);
      const cover = arrays(page);
      expect(cover).toHaveLength(4);
      expect(cover.every((a) => a.length > 0 && a.length <= 6)).toBe(true);
      // The grid's count and the page, sent only when that total is NULL: inside runs and edge runs.
      const grid = circleGridCountAndPageQuery(search, 7, 20, 0)!;
      expectConsistent(grid);
      expect(grid.params.slice(-2)).toEqual([20, 0]);
      expect(grid.text).toContain('bookcase_map_cell');
      // No value a custom plan could fold into a constant (it then looked cheaper than the generic plan, and the
      // statement was planned on every request at 1M): the level is a one-row subquery, as are the arrays.
      expect(grid.text).toMatch(/bookcase_map_cell\([^)]*\)\), \(SELECT \$\d+::int\)::int\)/);
      expect(grid.text).not.toMatch(/unnest\(\$/);
      // The cell functions only for libraries within a hair of a run's border (k.core).
      expect(grid.text).toMatch(/<@ k\.core\s+OR \(bookcase_map_cell\(/);
      expect(grid.text).not.toContain('CASE');
      expect(grid.text).toMatch(
        /LIMIT least\((\$\d+::int|\(SELECT \$\d+::int\)::int), greatest\(t\.total - (\$\d+::int|\(SELECT \$\d+::int\)(::int)?), 0\)\)/,
      );
      expect(arrays(grid).length).toBe(11);
    }
    // Nor the filters: with a country custom plans estimated its share, and were chosen on every request at 1M.
    const filtered = {
      near: { lat: 52.52, lng: 13.4, radiusMeters: 5000 },
      country: 'de',
      hasPhoto: false,
    };
    for (const statement of [
      countAndPageQuery(filtered, null, 20, 0),
      circleGridCountAndPageQuery(filtered, null, 20, 0)!,
    ]) {
      expect(statement.text).not.toMatch(/country = \$\d+(?!\d)(?!::char\(2\)\))/);
      expect(statement.text).toMatch(/c\.country = \(SELECT \$\d+::char\(2\)\)/);
      expect(statement.text).toMatch(/c\.has_photo = \(SELECT \$\d+::boolean\)/);
    }
    const grid = (search: LibrarySearch) => circleGridCountAndPageQuery(search, null, 20, 0);
    expect(grid({ near: { lat: 52.52, lng: 13.4, radiusMeters: 200 } })).toBeNull();
    expect(grid({ near: { lat: 52.52, lng: 13.4 } })).toBeNull();
    expect(grid({ near: { lat: 52.52, lng: 13.4, radiusMeters: 5000 }, q: 'x' })).toBeNull();
  });

  describe('q', () => {
    it('counts a list of q alone from library_search_prefixes when the words make one lexeme', () => {
      for (const statement of [
        countQuery({ q: 'Bücher' }),
        countAndPageQuery({ q: 'Bücher' }, null, 20, 0),
      ]) {
        expectConsistent(statement);
        expect(statement.text).toContain(
          'SELECT s.approved, s.in_name FROM library_search_prefixes s',
        );
        // The count from `libraries` is the other branch: several lexemes, or one longer than the prefixes kept.
        expect(statement.text).toMatch(
          /AND NOT \(cardinality\(.*\) = 1 AND char_length\(.*\) <= 24\)/,
        );
        expect(statement.text).toMatch(
          /WHERE cardinality\(.*\) = 1 AND char_length\(.*\) <= 24 AND s\.prefix = /,
        );
      }
      for (const search of [
        { q: 'bücher', country: 'DE' },
        { q: 'bücher', city: 'Köln' },
        { q: 'bücher', hasPhoto: false },
      ]) {
        expect(countQuery(search).text).not.toContain('library_search_prefixes');
        expect(countQuery(search).text).toMatch(
          /SELECT count\(\*\) AS total, count\(\*\) FILTER \(WHERE l\.search_vector @@ .*\) AS in_name\s+FROM libraries l WHERE/,
        );
      }
    });

    it('orders name matches first, then newest first, without ranking every match', () => {
      const { text } = countAndPageQuery({ q: 'buch' }, null, 20, 40);
      expect(text).not.toContain('ts_rank');
      expect(text).toContain('ORDER BY m.part, m.created_at DESC, m.id DESC');
      // Each part reads at most offset + limit rows, walked newest first or collected and sorted, and not at all
      // when it is empty or past the page (one-time filters on the counts). Prepared (q alone), the page's values
      // are one-row subqueries.
      const reach = String.raw`\(\(SELECT \$\d+::int\) \+ \(SELECT \$\d+::int\)\)`;
      expect(text).toContain('t AS MATERIALIZED');
      expect(
        text.match(
          new RegExp(String.raw`ORDER BY l\.created_at DESC, l\.id DESC LIMIT ${reach}`, 'g'),
        ),
      ).toHaveLength(2);
      expect(
        text.match(
          new RegExp(String.raw`ORDER BY c\.created_at DESC, c\.id DESC LIMIT ${reach}`, 'g'),
        ),
      ).toHaveLength(2);
      expect(text).toContain('t.in_name > 0 AND NOT t.bits1 AND 16 * (t.in_name)::float8');
      // q alone (or with country alone): a long walk tests the bitmaps' bits, by bookcase_search_walk.
      expect(text).toMatch(
        new RegExp(
          String.raw`FROM bookcase_search_walk\(\(\(SELECT v\.lexemes FROM v\)::text\[\]\), NULL, true, ${reach}\) w\s+WHERE t\.in_name > 0 AND t\.bits1 AND 16 \*`,
        ),
      );
      expect(text).toContain('bookcase_search_walk(');
      expect(text).toMatch(/>= 4000::float8 \* \(c\.in_name\)\) AS bits1/);
      expect(countAndPageQuery({ q: 'buch', country: 'de' }, null, 20, 0).text).toMatch(
        /bookcase_search_walk\(\(\(SELECT v\.lexemes FROM v\)::text\[\]\), \(SELECT \$\d+::char\(2\)\), false,/,
      );
      // Unprepared (with a place filter), the values are bare parameters: constants when PostgreSQL plans.
      const placed = countAndPageQuery({ q: 'buch', city: 'Köln' }, null, 20, 40).text;
      expect(
        placed.match(/ORDER BY c\.created_at DESC, c\.id DESC LIMIT \(\$\d+::int \+ \$\d+::int\)/g),
      ).toHaveLength(2);
      expect(placed).not.toContain('(SELECT nullif(regexp_replace(');
      // Other filters: the bitmaps do not hold their matches.
      for (const search of [
        { q: 'buch', city: 'Köln' },
        { q: 'buch', hasPhoto: true },
      ]) {
        const other = countAndPageQuery(search, null, 20, 0).text;
        expect(other).not.toContain('bookcase_search_walk');
        expect(other).not.toContain('bits1');
      }
      expect(text).toContain('t.total > t.in_name AND t.in_name < (');
      expect(text).toMatch(
        /ORDER BY u\.part, u\.created_at DESC, u\.id DESC LIMIT \(SELECT \$\d+::int\) OFFSET \(SELECT \$\d+::int\)/,
      );
      // The words' tsqueries and lexemes are InitPlans too, never computed per row, and the words are parsed once,
      // in `v`.
      expect(text).toMatch(
        /^WITH v AS MATERIALIZED \(SELECT x\.lexemes, bookcase_search_prefixed\(x\.lexemes\)/,
      );
      expect(text).toContain('l.search_vector @@ ((SELECT v.all_words FROM v)::tsquery)');
      expect(text).toContain('s.prefix = ANY (((SELECT v.lexemes FROM v)::text[]))');
      expect(text).toContain(`'\\&:*A', 'g')`);
      expect(text).toContain("to_tsvector('simple', bookcase_unaccent(l.name::text)) @@");
    });

    it('keeps the distance order of q with proximity, and the substring order of search', () => {
      expect(
        countAndPageQuery({ q: 'buch', near: { lat: 1, lng: 1 } }, null, 20, 0).text,
      ).toContain('ORDER BY bookcase_unit_vector(l.location) <<->>');
      const search = countAndPageQuery({ q: 'buch', search: 'x' }, null, 20, 0).text;
      expect(search).not.toContain('library_search_prefixes');
      expect(search).toContain('l.search_text LIKE');
    });
  });

  it('upper-cases the country for the aggregate and for the rows alike', () => {
    expect(countQuery({ country: 'de' }).params).toEqual(['DE']);
    expect(pageQuery({ country: 'de' }, null, 20, 0).params[0]).toBe('DE');
  });

  it('ranks text searches but not proximity', () => {
    expect(isRanked({ q: 'buch' })).toBe(true);
    expect(isRanked({ q: '…' })).toBe(false);
    expect(isRanked({ search: '10' })).toBe(true);
    expect(isRanked({ q: 'buch', near: { lat: 1, lng: 1 } })).toBe(false);
    expect(isRanked({ country: 'DE' })).toBe(false);
  });

  it('prepares lists without text filters, and q ordered by text without a place filter', () => {
    expect(worthPreparing({ near: { lat: 1, lng: 1 } })).toBe(true);
    expect(worthPreparing({ near: { lat: 1, lng: 1 }, country: 'DE', hasPhoto: true })).toBe(true);
    expect(worthPreparing({ near: { lat: 1, lng: 1 }, q: 'x' })).toBe(false);
    expect(worthPreparing({ near: { lat: 1, lng: 1 }, city: 'x' })).toBe(false);
    expect(worthPreparing({})).toBe(true);
    expect(worthPreparing({ country: 'DE', hasPhoto: true })).toBe(true);
    expect(worthPreparing({ q: 'x' })).toBe(true);
    expect(worthPreparing({ q: 'x', country: 'DE', hasPhoto: false })).toBe(true);
    expect(worthPreparing({ q: '…' })).toBe(false);
    expect(worthPreparing({ q: 'x', city: 'y' })).toBe(false);
    expect(worthPreparing({ search: 'x' })).toBe(false);
    expect(worthPreparing({ postalCode: '10' })).toBe(false);
  });

  it('page ids and rows by id', () => {
    const ids = pageIdsQuery({ search: 'buch', country: 'de' }, 20, 0);
    expectConsistent(ids);
    expect(ids.text).toMatch(/^SELECT l\.id FROM libraries l/);
    const substringIds = pageIdsQuery({ search: 'buch' }, 20, 0);
    expectConsistent(substringIds);
    expect(substringIds.text).toMatch(/CROSS JOIN LATERAL \(SELECT l\.id FROM \(/);
    expect(substringIds.text).not.toContain('l.slug');
    const textIds = pageIdsQuery({ q: 'buch' }, 20, 0);
    expectConsistent(textIds);
    expect(textIds.text).toMatch(/CROSS JOIN LATERAL \(SELECT r\.\* FROM \(/);
    expect(textIds.text).toContain(
      'CROSS JOIN LATERAL (SELECT l.id FROM libraries l WHERE l.id = m.id OFFSET 0) r',
    );
    expect(textIds.text).not.toContain('l.slug');
    const rows = byIdsQuery([3, 1, 2], 9);
    expectConsistent(rows);
    expect(rows.params).toEqual([9, [3, 1, 2]]);
    expect(rows.text).toContain("l.status = 'approved'");
  });

  it('reads a memoised search page after the first as a window of ids from the top, for a search alone', () => {
    expect(substringPageWindow({ search: 'regal' }, 20, 0)).toBeNull();
    expect(substringPageWindow({ search: 'regal' }, 20, 20)).toBe(64);
    expect(substringPageWindow({ search: 'regal' }, 20, 40)).toBe(64);
    expect(substringPageWindow({ search: 'regal' }, 20, 60)).toBe(128);
    expect(substringPageWindow({ search: 'regal' }, 20, 380)).toBe(512);
    expect(substringPageWindow({ search: 'e' }, 24, 1000)).toBe(1024);
    expect(substringPageWindow({ search: 'rund um die uhr' }, 20, 20)).toBe(64);
    expect(substringPageWindow({ search: 'regal' }, 20, 1010)).toBeNull();
    expect(substringPageWindow({ q: 'regal' }, 20, 20)).toBeNull();
    expect(substringPageWindow({ search: 'regal', country: 'DE' }, 20, 20)).toBeNull();
    expect(substringPageWindow({ search: 'regal', near: { lat: 48, lng: 16 } }, 20, 20)).toBeNull();
  });

  it('escapes LIKE wildcards and keeps at most 16 distinct words', () => {
    expect(likeEscape('50%_\\x')).toBe('50\\%\\_\\\\x');
    expect(searchWords('Bücher, bücher! Straße 12')).toBe('bücher straße 12');
    expect(searchWords('?!')).toBeNull();
    const many = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ');
    expect(searchWords(many)?.split(' ')).toHaveLength(16);
  });
});
