/**
 * GET /libraries/ text search and proximity on rows written directly with SQL: `q` (full text, accent- and
 * case-insensitive, name ranked above description), `search` (substring, name first, wins over q), and lat/lng
 * ordering and radius_km with points a known distance apart.
 */
import request from 'supertest';
import { insertLibraries, type LibraryFixture } from '../support/libraries.js';
import {
  countRelations,
  expectSearchPages,
  expectSearchTableRecounted,
  sqlOn,
} from '../support/search-reference.js';
import { useTestSuite } from '../support/suite.js';

const at = (iso: string) => new Date(iso);

/** Metres per degree of latitude at 60° N on the WGS 84 spheroid (the meridian arc). */
const METRES_PER_DEGREE_AT_60N = 111_132.954 + 559.822 * 0.5 - 1.175 * 0.5;
const CENTRE = { lat: 60, lng: 10 };
/** A point `km` north (negative: south) of the centre. */
const north = (km: number) => ({
  lat: CENTRE.lat + (km * 1000) / METRES_PER_DEGREE_AT_60N,
  lng: CENTRE.lng,
});

describe('library search and proximity', () => {
  const list = (query: string) => request(t.http).get(`/api/v1/libraries/?${query}`);
  const slugs = async (query: string) => {
    const res = await list(query);
    expect([res.status, res.body.message]).toEqual([200, undefined]);
    return (res.body.items as { slug: string }[]).map((item) => item.slug);
  };

  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    const fixtures: LibraryFixture[] = [
      // q: full text over name and description.
      {
        slug: 'q-name',
        name: 'Bücherschrank Nord',
        description: 'Am Bahnhof.',
        created_at: at('2027-01-01T00:00:00Z'),
      },
      {
        slug: 'q-description',
        name: 'Tauschregal',
        description: 'Ein kleiner Bücherschrank im Hof.',
        created_at: at('2027-01-02T00:00:00Z'),
      },
      { slug: 'q-lesekiste-name', name: 'Lesekiste', created_at: at('2027-01-03T00:00:00Z') },
      {
        slug: 'q-lesekiste-description',
        name: 'Regal am Park',
        description:
          'Lesekiste, lesekiste: Lesekiste! LESEKISTE. Lesekiste lesekiste Lesekiste Lesekiste.',
        created_at: at('2027-01-04T00:00:00Z'),
      },
      {
        slug: 'q-city-only',
        name: 'Zeitungsbox',
        city: 'Bücherstadt',
        created_at: at('2027-01-05T00:00:00Z'),
      },
      { slug: 'q-ukrainian', name: 'Мʼята книжкова шафа', created_at: at('2027-01-07T00:00:00Z') },
      {
        slug: 'q-hyphen',
        name: 'Lese-Ecke',
        description: 'ŉ ©',
        created_at: at('2027-01-08T00:00:00Z'),
      },
      {
        slug: 'q-pending',
        name: 'Bücherschrank Süd',
        status: 'pending',
        created_at: at('2027-01-06T00:00:00Z'),
      },
      // search: substring over name, description, city, address, postal code.
      { slug: 's-name', name: 'Hafenkiste', created_at: at('2026-01-01T00:00:00Z') },
      { slug: 's-set-minus', name: 'Regal A∖B', created_at: at('2025-12-01T00:00:00Z') },
      {
        slug: 's-description',
        name: 'Kiste Eins',
        description: 'Direkt am alten Hafen.',
        created_at: at('2026-01-02T00:00:00Z'),
      },
      {
        slug: 's-city',
        name: 'Kiste Zwei',
        city: 'Hafenstadt',
        created_at: at('2026-01-03T00:00:00Z'),
      },
      {
        slug: 's-address',
        name: 'Kiste Drei',
        address: 'Hafenstraße 3',
        created_at: at('2026-01-04T00:00:00Z'),
      },
      {
        slug: 's-postal',
        name: 'Kiste Vier',
        postal_code: '79098',
        created_at: at('2026-01-05T00:00:00Z'),
      },
      { slug: 's-name-accented', name: 'Häfen-Regal', created_at: at('2026-01-06T00:00:00Z') },
      {
        slug: 's-rejected',
        name: 'Hafenbox',
        status: 'rejected',
        created_at: at('2026-01-07T00:00:00Z'),
      },
      // Proximity around 60° N 10° E; created in an order unrelated to distance.
      { slug: 'p-0.5km', ...north(0.5), created_at: at('2025-01-05T00:00:00Z') },
      { slug: 'p-3km-south', ...north(-3), created_at: at('2025-01-09T00:00:00Z') },
      { slug: 'p-5km', name: 'Nordkiste', ...north(5), created_at: at('2025-01-01T00:00:00Z') },
      { slug: 'p-9.5km', ...north(9.5), created_at: at('2025-01-07T00:00:00Z') },
      { slug: 'p-10.5km', ...north(10.5), created_at: at('2025-01-03T00:00:00Z') },
      {
        slug: 'p-50km',
        name: 'Nordkiste Zwei',
        ...north(50),
        created_at: at('2025-01-08T00:00:00Z'),
      },
      { slug: 'p-98km-south', ...north(-98), created_at: at('2025-01-02T00:00:00Z') },
      { slug: 'p-102km', ...north(102), created_at: at('2025-01-06T00:00:00Z') },
      { slug: 'p-300km', ...north(300), created_at: at('2025-01-04T00:00:00Z') },
      {
        slug: 'p-pending',
        ...north(0.1),
        status: 'pending',
        created_at: at('2025-01-10T00:00:00Z'),
      },
    ];
    await insertLibraries(
      db.url,
      fixtures.map((fixture) => ({ country: 'NO', city: 'Oslo', ...fixture })),
    );
  });

  describe('q', () => {
    it('is accent- and case-insensitive and matches word prefixes in name and description', async () => {
      for (const q of ['bucher', 'BÜCHER', 'Bücherschrank', 'bücherSCHR']) {
        expect(await slugs(`q=${encodeURIComponent(q)}`)).toEqual(['q-name', 'q-description']);
      }
    });

    it('ranks a name match above a newer description-only match', async () => {
      expect(await slugs('q=bucherschrank')).toEqual(['q-name', 'q-description']);
    });

    it('ranks a name match above a description that repeats the word many times', async () => {
      expect(await slugs('q=lesekiste')).toEqual(['q-lesekiste-name', 'q-lesekiste-description']);
    });

    it('requires every word', async () => {
      expect(await slugs(`q=${encodeURIComponent('bücher bahnhof')}`)).toEqual(['q-name']);
      expect(await slugs(`q=${encodeURIComponent('bücher garten')}`)).toEqual([]);
    });

    it('does not search the city, and never lists unapproved rows', async () => {
      expect(await slugs('q=zeitungsbox')).toEqual(['q-city-only']);
      expect(await slugs('q=bucherstadt')).toEqual([]);
      expect(await slugs('q=sud')).toEqual([]);
    });

    it('matches words whose accent folding yields punctuation (ʼ, ŉ) without failing', async () => {
      expect(await slugs(`q=${encodeURIComponent('мʼята')}`)).toEqual(['q-ukrainian']);
      expect(await slugs(`q=${encodeURIComponent("м'ята шафа")}`)).toEqual(['q-ukrainian']);
      expect(await slugs(`q=${encodeURIComponent('КНИЖ')}`)).toEqual(['q-ukrainian']);
      expect(await slugs(`q=${encodeURIComponent('lese-ecke')}`)).toEqual(['q-hyphen']);
      for (const q of ['ʼ', 'ŉ', 'ʻʼ', 'ː', "'", '«»', 'ŉ lese', '(C)', 'a\\b', "o'", ':*']) {
        const res = await list(`q=${encodeURIComponent(q)}`);
        expect([q, res.status]).toEqual([q, 200]);
      }
      expect(await slugs(`q=${encodeURIComponent('ŉ lese')}`)).toEqual(['q-hyphen']);
    });

    it('treats query syntax as plain words', async () => {
      expect(await slugs(`q=${encodeURIComponent("bücher:* & !nord | ('")}`)).toEqual(['q-name']);
    });
  });

  describe('search', () => {
    const HAFEN = ['s-name-accented', 's-name', 's-address', 's-city', 's-description'];

    it('finds a substring in name, description, city, address; name matches first, then newest', async () => {
      expect(await slugs('search=hafen')).toEqual(HAFEN);
      const res = await list('search=hafen').expect(200);
      expect(res.body.pagination.total).toBe(5);
    });

    it('is case- and accent-insensitive', async () => {
      expect(await slugs('search=HAFEN')).toEqual(HAFEN);
      expect(await slugs(`search=${encodeURIComponent('häfen')}`)).toEqual(HAFEN);
    });

    it('matches inside words and postal codes', async () => {
      expect(await slugs('search=fenkis')).toEqual(['s-name']);
      expect(await slugs('search=7909')).toEqual(['s-postal']);
    });

    it('wins over q', async () => {
      expect(await slugs('search=hafen&q=bucherschrank')).toEqual(HAFEN);
    });

    it('takes LIKE wildcards literally, also when accent folding produces one (∖ → \\)', async () => {
      expect(await slugs(`search=${encodeURIComponent('∖')}`)).toEqual(['s-set-minus']);
      expect(await slugs(`search=${encodeURIComponent('a∖b')}`)).toEqual(['s-set-minus']);
      expect(await slugs(`search=${encodeURIComponent('\\')}`)).toEqual(['s-set-minus']);
      expect(await slugs('search=%25')).toEqual([]);
      expect(await slugs('search=_')).toEqual([]);
      expect(await slugs(`search=${encodeURIComponent('haf%n')}`)).toEqual([]);
    });
  });

  describe('proximity', () => {
    const centre = `lat=${CENTRE.lat}&lng=${CENTRE.lng}`;
    const BY_DISTANCE = [
      'p-0.5km',
      'p-3km-south',
      'p-5km',
      'p-9.5km',
      'p-10.5km',
      'p-50km',
      'p-98km-south',
      'p-102km',
      'p-300km',
    ];

    it('orders by distance, nearest first', async () => {
      expect((await slugs(`${centre}&page_size=50`)).slice(0, BY_DISTANCE.length)).toEqual(
        BY_DISTANCE,
      );
    });

    it('pages through the distance order', async () => {
      expect(await slugs(`${centre}&page=2&page_size=3`)).toEqual([
        'p-9.5km',
        'p-10.5km',
        'p-50km',
      ]);
    });

    it('keeps only libraries within radius_km (inclusive of both boundaries 1 and 100)', async () => {
      expect(await slugs(`${centre}&radius_km=1`)).toEqual(['p-0.5km']);
      expect(await slugs(`${centre}&radius_km=1.5`)).toEqual(['p-0.5km']);
      expect(await slugs(`${centre}&radius_km=10`)).toEqual([
        'p-0.5km',
        'p-3km-south',
        'p-5km',
        'p-9.5km',
      ]);
      expect(await slugs(`${centre}&radius_km=11`)).toEqual(BY_DISTANCE.slice(0, 5));
      expect(await slugs(`${centre}&radius_km=100`)).toEqual(BY_DISTANCE.slice(0, 7));
      const res = await list(`${centre}&radius_km=100`).expect(200);
      expect(res.body.pagination.total).toBe(7);
    });

    it('combines with text search', async () => {
      expect(await slugs(`${centre}&search=nordkiste`)).toEqual(['p-5km', 'p-50km']);
      expect(await slugs(`lat=${north(60).lat}&lng=10&search=nordkiste`)).toEqual([
        'p-50km',
        'p-5km',
      ]);
      expect(await slugs(`${centre}&radius_km=20&search=nordkiste`)).toEqual(['p-5km']);
    });

    it.each([
      ['lat=60', 'lng'],
      ['lng=10', 'lat'],
      ['radius_km=10', 'radius_km'],
      ['lat=60&lng=10&radius_km=0.5', 'radius_km'],
      ['lat=60&lng=10&radius_km=100.5', 'radius_km'],
      ['lat=60&lng=10&radius_km=far', 'radius_km'],
      ['lat=90.5&lng=10', 'lat'],
      ['lat=-91&lng=10', 'lat'],
      ['lat=60&lng=180.5', 'lng'],
      ['lat=60&lng=-181', 'lng'],
      ['lat=north&lng=10', 'lat'],
    ])('refuses %s with 422', async (query, field) => {
      const res = await list(query).expect(422);
      expect(res.body.message).toBe('Validation error.');
      const locs = (res.body.details.errors as { loc: string[] }[]).map((error) => error.loc);
      expect(locs).toContainEqual(['query', field]);
    });
  });

  /**
   * `search` alone at scale (issue 22): its counts come from library_search_tokens (migration 1767500000000) and its
   * pages walk the list or collect the matches. Both are checked against plain SQL on the folded text after every
   * kind of write, on every page, at page sizes that take each way of reading a page (walk by bitmap, walk by row,
   * collect; WALK_COST_RATIO against the ~180 approved rows here).
   */
  describe('search alone, against plain SQL after writes', () => {
    const sql = sqlOn(db);

    const LONG = 'kobold'.repeat(75);
    /**
     * Substrings: tokenized (3–100 folded characters, at most one space) and not; across two fields; accents both
     * ways; LIKE metacharacters.
     */
    const SEARCHES = [
      'kobold',
      'KÖBOLD',
      'bücher',
      'bucher',
      'straße',
      'strasse',
      'stras',
      'köln',
      'koln',
      'église',
      'eglise',
      '100%',
      '%',
      '_',
      'e_e',
      'lese_',
      'snake_case',
      '\\',
      'c:\\te',
      '0%',
      '1011',
      '066',
      'e',
      'ql',
      'quelle  am',
      'quelle am',
      'am platz',
      'kobold und',
      'kobold und zwerg',
      'ld und',
      'kiste kobold',
      'straße 5',
      '5 50667',
      'e am',
      // `½` folds to ` 1/2`: with a space, and (the second) no three letters or digits in a row once folded, the
      // statement's own fallback.
      'ko½ld',
      'o½l',
      'und',
      'nichtsdergleichen',
      LONG.slice(3, 103),
      LONG.slice(150, 250),
      LONG.slice(3, 104),
    ];

    /** Pages 1, 2, one in the middle and the last, at each page size: total and slugs as plain SQL has them. */
    const expectSearches = () => expectSearchPages(sql, list, SEARCHES);

    /** library_search_tokens holds exactly the bits of a recount, and no empty row. */
    const expectTokensExact = () =>
      expectSearchTableRecounted(sql, 'library_search_tokens', 'bookcase_search_tokens');

    beforeAll(async () => {
      // Ids across a chunk boundary (8,192 ids), in one statement; accents, LIKE metacharacters, double spaces, a
      // token of 450 characters (kept as pieces).
      await sql(
        `INSERT INTO libraries (id, slug, name, description, address, city, country, postal_code, location,
                                status, created_at)
         SELECT 8100 + i, 'sub-' || i,
                (ARRAY['Bücherkobold ' || i, 'Straßenregal', 'Café 100% Bücher', 'Lese_Ecke', 'Back\\slash Kiste',
                       'Quelle  am Platz', 'Kobold'])[1 + i % 7],
                (ARRAY['Kobold und Zwerg.', 'Rabatt 50%', 'snake_case', 'C:\\temp', '', $1,
                       'Quelle am Platz'])[1 + i % 5 + i % 3],
                (ARRAY['Hauptstraße 5', 'Rue de l’Église 2', '', 'Ko½ld 7'])[1 + i % 4],
                (ARRAY['Köln', 'Koeln', 'Bern'])[1 + i % 4 % 3], 'DE',
                (ARRAY['50667', '1011', 'AB_12', ''])[1 + i % 4],
                ST_SetSRID(ST_MakePoint(7, 51), 4326)::geography,
                CASE WHEN i % 6 = 0 THEN 'pending' WHEN i % 11 = 0 THEN 'rejected' ELSE 'approved' END,
                timestamptz '2024-01-01' + (i * 7919 % 400) * interval '1 hour'
         FROM generate_series(1, 180) AS i`,
        [LONG],
      );
    });

    it('counts a substring with at most one space from library_search_tokens alone, others from libraries', async () => {
      const relations = (text: string) => countRelations(sql, text);
      for (const text of [
        'kobold',
        'KÖBOLD',
        '100%',
        'snake_case',
        'kobold und',
        LONG.slice(3, 103),
      ]) {
        expect([text, await relations(text)]).toEqual([text, ['library_search_tokens']]);
      }
      // One or two characters and two spaces (`ql`, `%`, `quelle  am`): search-short.e2e-spec.ts; no three letters or
      // digits in a row (`e am`): search-checked.e2e-spec.ts.
      for (const text of ['o½l', LONG.slice(3, 104)]) {
        expect([text, await relations(text)]).toEqual([text, ['libraries']]);
      }
    });

    it('answers the exact total and order of plain SQL after inserts, approvals, rejections, edits and deletions', async () => {
      await expectTokensExact();
      await expectSearches();
      await sql(
        `UPDATE libraries SET status = 'approved' WHERE slug IN ('sub-6', 'sub-12', 'sub-66')`,
      );
      await sql(
        `UPDATE libraries SET status = 'rejected' WHERE slug IN ('sub-1', 'sub-7', 'sub-20')`,
      );
      await expectTokensExact();
      await expectSearches();
      // The text: a name that moves a match into the name (and out), a description, city, address, postal code.
      await sql(`UPDATE libraries SET name = 'Kein Treffer' WHERE slug IN ('sub-14', 'sub-21')`);
      await sql(`UPDATE libraries SET name = 'Quelle am Platz' WHERE slug = 'sub-2'`);
      await sql(
        `UPDATE libraries SET description = 'Bücher_Kobold 100%', city = 'Église', address = 'Ql 1',
                              postal_code = '10110' WHERE slug IN ('sub-3', 'sub-4', 'sub-5')`,
      );
      // A word moved between name and description: the second write leaves `search_text` as it was, not the name.
      await sql(
        `UPDATE libraries SET name = 'Kobold und', description = 'Zwerg.' WHERE slug = 'sub-8'`,
      );
      await sql(
        `UPDATE libraries SET name = 'Kobold', description = 'und Zwerg.' WHERE slug = 'sub-8'`,
      );
      await sql(`UPDATE libraries SET name = name, country = 'AT' WHERE slug LIKE 'sub-1%'`);
      await expectTokensExact();
      await expectSearches();
      await sql(`DELETE FROM libraries WHERE slug IN ('sub-3', 'sub-9', 'sub-10', 'sub-100')`);
      await expectTokensExact();
      await expectSearches();
      await sql(`UPDATE libraries SET status = 'pending' WHERE slug LIKE 'sub-%'`);
      await expectTokensExact();
      await expectSearches();
      await sql(`DELETE FROM libraries WHERE slug LIKE 'sub-%'`);
      await expectTokensExact();
    }, 300_000); // Many searches and pages: about 15 s quiet, 80 s at load 13.
  });

  it.each(['q', 'search', 'city', 'postal_code'])(
    'refuses a NUL character in %s with 422, not 500',
    async (param) => {
      const res = await list(`${param}=a%00b`);
      expect([res.status, res.body.message]).toEqual([422, 'Validation error.']);
      expect(res.body.details.errors[0].loc).toEqual(['query', param]);
    },
  );
});
