/**
 * `q` at scale (issue 22): library_search_prefixes stays equal to a recount through every kind of write (bulk
 * insert, approval, rejection, a new name or description, an unrelated change, deletion), each of its counts is the
 * number of approved libraries a prefix query matches (in the whole text, and in the name), and the list answers
 * the exact `total` and the order "name matches first, then newest first" on every page, across the two parts, and
 * whichever way each part is read (collected, walked testing tsvectors, walked testing bits by bookcase_search_walk).
 */
import request from 'supertest';
import { textCountAndPageQuery, type TextWalk } from '../../src/libraries/list-query.js';
import { withClient, type TestDatabase } from '../support/database.js';
import type { TestApp } from '../support/app.js';
import { useTestSuite } from '../support/suite.js';

describe('q: library_search_prefixes and the page order', () => {
  let db: TestDatabase;
  let t: TestApp;

  useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ db, t } = s));

  const sql = (text: string, params: unknown[] = []) =>
    withClient(db.url, async (client) => (await client.query(text, params)).rows);

  /** A prefix as a tsquery (quoted like list-query.ts's prefixTsQuerySql), optionally restricted to weight A. */
  const prefixQuery = (weight: string) =>
    `to_tsquery('simple', '''' || replace(replace(s.prefix, '\\', '\\\\'), '''', '''''') || ''':*${weight}')`;

  async function expectExact(): Promise<void> {
    const kept = await sql(
      `SELECT prefix || '|' || approved || '|' || in_name AS line FROM library_search_prefixes
       WHERE approved <> 0 OR in_name <> 0 ORDER BY prefix`,
    );
    const recount = await sql(
      `SELECT p.prefix || '|' || count(*) || '|' || count(*) FILTER (WHERE p.in_name) AS line
       FROM libraries l, bookcase_search_prefixes(l.search_vector) p
       WHERE l.status = 'approved' GROUP BY p.prefix ORDER BY p.prefix`,
    );
    expect(kept).toEqual(recount);
    // What the counts mean, checked against the prefix queries themselves.
    const wrong = await sql(
      `SELECT s.prefix, s.approved, s.in_name,
              (SELECT count(*) FROM libraries l WHERE l.status = 'approved'
                 AND l.search_vector @@ ${prefixQuery('')})::int AS matches,
              (SELECT count(*) FROM libraries l WHERE l.status = 'approved'
                 AND l.search_vector @@ ${prefixQuery('A')})::int AS name_matches
       FROM library_search_prefixes s`,
    );
    // The bitmaps of several-word queries: every approved library's bit is set in the row of each of its prefixes
    // (in `in_name` exactly when the prefix is in its name), and no other bit is (the bits add up to the counts).
    const missing = await sql(
      `SELECT p.prefix, l.id FROM libraries l CROSS JOIN bookcase_search_prefixes(l.search_vector) p
       LEFT JOIN library_search_bitmaps b ON b.prefix = p.prefix AND b.chunk = l.id >> 13
       WHERE l.status = 'approved'
         AND (b.prefix IS NULL OR get_bit(b.approved, l.id & 8191) = 0
              OR get_bit(b.in_name, l.id & 8191) <> p.in_name::int)`,
    );
    expect(missing).toEqual([]);
    const bits = await sql(
      `SELECT prefix || '|' || sum(bit_count(approved)) || '|' || sum(bit_count(in_name)) AS line
       FROM library_search_bitmaps GROUP BY prefix ORDER BY prefix`,
    );
    expect(bits).toEqual(recount);
    expect(
      await sql(
        `SELECT count(*)::int AS n FROM library_search_bitmaps WHERE bit_count(approved) = 0`,
      ),
    ).toEqual([{ n: 0 }]);
    // The countries' bitmaps: exactly the approved libraries of each country.
    expect(
      await sql(
        `SELECT l.id FROM libraries l LEFT JOIN library_country_bitmaps b
           ON b.country = l.country AND b.chunk = l.id >> 13
         WHERE l.status = 'approved' AND (b.country IS NULL OR get_bit(b.approved, l.id & 8191) = 0)`,
      ),
    ).toEqual([]);
    expect(
      await sql(
        `SELECT country || '|' || sum(bit_count(approved)) AS line FROM library_country_bitmaps
         GROUP BY country ORDER BY country`,
      ),
    ).toEqual(
      await sql(
        `SELECT country || '|' || count(*) AS line FROM libraries WHERE status = 'approved'
         GROUP BY country ORDER BY country`,
      ),
    );
    expect(
      await sql(
        `SELECT count(*)::int AS n FROM library_country_bitmaps WHERE bit_count(approved) = 0`,
      ),
    ).toEqual([{ n: 0 }]);
    expect(
      wrong.filter(
        (row: { approved: number; in_name: number; matches: number; name_matches: number }) =>
          row.approved !== row.matches || row.in_name !== row.name_matches,
      ),
    ).toEqual([]);
  }

  it('follows inserts, approvals, rejections, edits of the text and deletions', async () => {
    await sql(
      // Ids across a chunk boundary of library_search_bitmaps (8,192 ids: 106,495 is the last bit of one chunk).
      `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location, status,
                              created_at)
       SELECT 106435 + i, 'prefix-' || i,
              (ARRAY['Bücherschrank', 'Book nook', 'Tauschregal', 'Lese-Ecke'])[1 + i % 4] || ' ' || i,
              (ARRAY['Bücher und Comics', 'Poetry, maps', '', 'Bookshelf at the station'])[1 + i % 3],
              '', 'City', 'DE', '', ST_SetSRID(ST_MakePoint(10, 50), 4326)::geography,
              CASE WHEN i % 5 = 0 THEN 'pending' ELSE 'approved' END,
              timestamptz '2026-01-01' + i * interval '1 hour'
       FROM generate_series(1, 120) AS i`,
    );
    await expectExact();
    expect(
      await sql(`SELECT approved, in_name FROM library_search_prefixes WHERE prefix = 'buch'`),
    ).toEqual([{ approved: 48, in_name: 24 }]);
    await sql(`UPDATE libraries SET status = 'approved' WHERE slug IN ('prefix-5', 'prefix-10')`);
    await expectExact();
    await sql(`UPDATE libraries SET status = 'rejected' WHERE slug LIKE 'prefix-1%'`);
    await expectExact();
    await sql(`UPDATE libraries SET name = 'Zauberberg Regal' WHERE slug = 'prefix-21'`);
    await sql(
      `UPDATE libraries SET description = 'Zauberberg und Zürich' WHERE slug IN ('prefix-22', 'prefix-23')`,
    );
    await expectExact();
    await sql(
      `UPDATE libraries SET photo_key = 'p.jpg', thumbnail_key = 't.jpg' WHERE slug = 'prefix-24'`,
    );
    await sql(`UPDATE libraries SET name = name, city = 'Elsewhere'`);
    await sql(
      `UPDATE libraries SET country = 'AT' WHERE slug IN ('prefix-25', 'prefix-26', 'prefix-27')`,
    );
    await expectExact();
    await sql(`DELETE FROM libraries WHERE slug IN ('prefix-21', 'prefix-30', 'prefix-35')`);
    await expectExact();
    // Every approved library is gone from the counts once deleted or unapproved.
    await sql(`UPDATE libraries SET status = 'pending' WHERE slug LIKE 'prefix-%'`);
    await expectExact();
    expect(
      await sql(
        `SELECT count(*)::int AS n FROM library_search_prefixes WHERE approved <> 0 OR in_name <> 0`,
      ),
    ).toEqual([{ n: 0 }]);
    expect(await sql(`SELECT count(*)::int AS n FROM library_search_bitmaps`)).toEqual([{ n: 0 }]);
  });

  it('counts q of several words exactly from the bitmaps and orders name matches first, on every page', async () => {
    // Words drawn per row so that every pair occurs in names, in descriptions and across both; one statement of
    // 300 ids in one chunk, so common prefixes take bookcase_search_bits' path for many bits.
    await sql(
      `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location, status,
                              created_at)
       SELECT 300000 + i * 7, 'words-' || i,
              (ARRAY['Book', 'Phone', 'Swap', 'Nook', 'Box'])[1 + i % 5] || ' '
                || (ARRAY['swap', 'box', 'shelf', 'corner', 'book', 'bücherbox', 'Markt'])[1 + i % 7],
              (ARRAY['community bookshelf', 'am Markt', 'phone booth', 'swap books', ''])[1 + i % 11 % 5],
              '', 'City', (ARRAY['DE', 'AT', 'CH'])[1 + i % 3], '',
              ST_SetSRID(ST_MakePoint(10, 50), 4326)::geography,
              CASE WHEN i % 13 = 0 THEN 'pending' ELSE 'approved' END,
              timestamptz '2026-02-01' + (i * 7919 % 500) * interval '1 minute'
       FROM generate_series(1, 300) AS i`,
    );
    await expectExact();
    const prefixes = (words: string[], weight: string) =>
      words.map((word) => `'${word}':*${weight}`).join(' & ');
    // Alone, and with `country` (the country's bitmap too): one word or several.
    const cases = [
      ['book', 'swap'],
      ['phone', 'box'],
      ['community', 'bookshelf'],
      ['book', 'nook'],
      ['bucherbox', 'am', 'markt'],
      ['b', 'sw'],
      ['swap', 'nothingmatches'],
      ['swap'],
      ['bo'],
    ].flatMap((words) => [null, 'AT'].map((country) => ({ words, country })));
    for (const { words, country } of cases) {
      const expected = (
        await sql(
          `SELECT l.slug FROM libraries l
           WHERE l.status = 'approved' AND l.search_vector @@ to_tsquery('simple', $1)
             AND ($3::text IS NULL OR l.country = $3)
           ORDER BY (l.search_vector @@ to_tsquery('simple', $2)) DESC, l.created_at DESC, l.id DESC`,
          [prefixes(words, ''), prefixes(words, 'A'), country],
        )
      ).map((row: { slug: string }) => row.slug);
      const query = `q=${encodeURIComponent(words.join(' ').replace('bucherbox', 'Bücherbox'))}${country ? `&country=${country}` : ''}`;
      const first = await request(t.http).get(`/api/v1/libraries/?${query}&page_size=50`);
      expect([words, country, first.status, first.body.pagination?.total]).toEqual([
        words,
        country,
        200,
        expected.length,
      ]);
      const slugs: string[] = [];
      for (let n = 1; n <= first.body.pagination.total_pages; n++) {
        const res = await request(t.http)
          .get(`/api/v1/libraries/?${query}&page_size=50&page=${n}`)
          .expect(200);
        slugs.push(...(res.body.items as { slug: string }[]).map((item) => item.slug));
      }
      expect([words, country, slugs]).toEqual([words, country, expected]);
      // The same pages with each way of reading a part forced, at page sizes that end inside a part and across both.
      const ways: Record<string, TextWalk> = {
        collected: { ratio: 0, bitsFrom: 0 },
        'walked, tsvectors': { ratio: 1e9, bitsFrom: 1e12 },
        'walked, bits': { ratio: 1e9, bitsFrom: 0 },
      };
      for (const [way, walk] of Object.entries(ways)) {
        // Pages of 50 to the end (past it: no row), and the first pages of 7, which end inside a part.
        for (const [size, end] of [
          [50, expected.length + 50],
          [7, 28],
        ]) {
          const forced: string[] = [];
          const totals = new Set<number>();
          await withClient(db.url, async (client) => {
            for (let offset = 0; offset < end; offset += size) {
              const statement = textCountAndPageQuery(
                { q: words.join(' '), country: country ?? undefined },
                null,
                size,
                offset,
                walk,
              )!;
              const { rows } = await client.query<{ total: number; slug: string | null }>(
                statement.text,
                statement.params,
              );
              totals.add(rows[0].total);
              forced.push(...rows.flatMap((row) => (row.slug === null ? [] : [row.slug])));
            }
          });
          expect([words, country, way, size, [...totals], forced]).toEqual([
            words,
            country,
            way,
            size,
            [expected.length],
            expected.slice(0, end),
          ]);
        }
      }
    }
    await sql(`DELETE FROM libraries WHERE slug LIKE 'words-%'`);
    await expectExact();
  });

  describe('the list', () => {
    const at = (hour: number) => new Date(Date.UTC(2027, 0, 1, hour));

    beforeAll(async () => {
      // Three name matches of "kiosk" (one of them also in the description) and four description-only matches,
      // created in an order that mixes the two, and rows that must never show.
      const rows: [string, string, string, number, string][] = [
        ['k-name-old', 'Kiosk am Markt', '', 1, 'approved'],
        ['k-desc-1', 'Regal Eins', 'Neben dem Kiosk.', 2, 'approved'],
        ['k-name-mid', 'Alter Kioskschrank', 'Ein Kiosk voller Bücher.', 3, 'approved'],
        ['k-desc-2', 'Regal Zwei', 'Kioske gibt es hier nicht.', 4, 'approved'],
        ['k-desc-3', 'Regal Drei', 'kiosk kiosk kiosk kiosk', 5, 'approved'],
        ['k-name-new', 'Kiosk Süd', 'Am Bahnhof.', 6, 'approved'],
        ['k-desc-4', 'Regal Vier', 'Ehemaliger KIOSK.', 7, 'approved'],
        ['k-pending', 'Kiosk Pending', 'Kiosk', 8, 'pending'],
        ['k-rejected', 'Regal', 'Kiosk', 9, 'rejected'],
      ];
      await withClient(db.url, async (client) => {
        for (const [slug, name, description, hour, status] of rows) {
          await client.query(
            `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location,
                                    status, created_at)
             VALUES ($1, $2, $3, '', 'Wien', 'AT', '', ST_SetSRID(ST_MakePoint(16, 48), 4326)::geography, $4, $5)`,
            [slug, name, description, status, at(hour)],
          );
        }
      });
    });

    const ORDER = [
      'k-name-new',
      'k-name-mid',
      'k-name-old',
      'k-desc-4',
      'k-desc-3',
      'k-desc-2',
      'k-desc-1',
    ];

    async function page(query: string) {
      const res = await request(t.http).get(`/api/v1/libraries/?${query}`);
      expect([res.status, res.body.message]).toEqual([200, undefined]);
      return {
        slugs: (res.body.items as { slug: string }[]).map((item) => item.slug),
        pagination: res.body.pagination as { page: number; total: number; total_pages: number },
      };
    }

    it('lists name matches first, then the rest, newest first within each, with the exact total', async () => {
      for (const q of ['kiosk', 'KIOSK', 'kio', 'Kiosk!']) {
        const { slugs, pagination } = await page(`q=${encodeURIComponent(q)}`);
        expect([q, slugs]).toEqual([q, ORDER]);
        expect(pagination.total).toBe(7);
      }
    });

    it('pages across the two parts, and a page past the end is the last page', async () => {
      const pages: string[] = [];
      for (let n = 1; n <= 4; n++) {
        const { slugs, pagination } = await page(`q=kiosk&page_size=2&page=${n}`);
        expect([n, pagination.total, pagination.total_pages]).toEqual([n, 7, 4]);
        pages.push(...slugs);
      }
      expect(pages).toEqual(ORDER);
      const past = await page('q=kiosk&page_size=2&page=9');
      expect(past.pagination.page).toBe(4);
      expect(past.slugs).toEqual(['k-desc-1']);
      expect((await page('q=kiosk&page_size=3&page=1')).slugs).toEqual(ORDER.slice(0, 3));
      expect((await page('q=kiosk&page_size=3&page=2')).slugs).toEqual(ORDER.slice(3, 6));
    });

    it('requires every word in the name for the first part; other filters apply to both parts', async () => {
      // "kiosk bücher": no name holds both; k-name-mid has both words across name and description.
      const both = await page(`q=${encodeURIComponent('kiosk bücher')}`);
      expect(both.slugs).toEqual(['k-name-mid']);
      expect(both.pagination.total).toBe(1);
      const inWien = await page('q=kiosk&city=wien&country=AT&page_size=4&page=2');
      expect(inWien.slugs).toEqual(ORDER.slice(4));
      expect(inWien.pagination.total).toBe(7);
      expect((await page('q=kiosk&country=DE')).pagination.total).toBe(0);
      expect((await page(`q=${encodeURIComponent('kiosk süd')}`)).slugs).toEqual(['k-name-new']);
      expect((await page('q=nothingmatchesthis')).pagination.total).toBe(0);
    });
  });
});
