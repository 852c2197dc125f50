/**
 * POST /{slug}/check against the fake interpreter: each of the five blocking signals on its own, nothing beyond the
 * radius, other features as warnings only, the stored snapshot (relevant public tags only) and its event; failed
 * queries (5xx three times, timeout, malformed, long Retry-After, dropped sockets) leave a sanitized error and block
 * the confirm (duplicate-check-failures.e2e-spec.ts); a check older than MAPDB_DUPLICATE_CHECK_MAX_AGE_SECONDS
 * (here 600) is stale (there too).
 */
import {
  adminGet,
  codes,
  contributionRow,
  eventRows,
  sql,
  type SubmittedLibrary,
} from './helpers.js';
import { duplicateCheckSuite, SAME_BOOKCASE_TAGS } from './duplicate-check-support.js';

describe('map contribution duplicate check', () => {
  const { suite, library, near, check } = duplicateCheckSuite();
  const { fake, db, t, staff } = suite;

  type Snapshot = { type: string; id: number; distance_m: number; tags: object; signals: string[] };
  const expectSnapshot = (actual: Snapshot[], expected: Snapshot[]) => {
    expect(actual.map(({ distance_m: _d, ...rest }) => rest)).toEqual(
      expected.map(({ distance_m: _d, ...rest }) => rest),
    );
    actual.forEach((candidate, index) =>
      expect(Math.abs(candidate.distance_m - expected[index].distance_m)).toBeLessThanOrEqual(0.1),
    );
  };

  /** A node seeded `metres` north of the library: its id and tags, and the signals its candidate must carry. */
  type Seeded = [metres: number, id: number, tags: Record<string, string>, signals: string[]];

  /** Seeds the nodes and checks: possible_duplicate with exactly their candidates, in this order. */
  const blockedBy = async (lib: SubmittedLibrary, ...nodes: Seeded[]) => {
    fake.seedQuery(...nodes.map(([metres, id, tags]) => near(lib, metres, id, tags)));
    const body = await check(lib);
    expect(body.status).toBe('possible_duplicate');
    expectSnapshot(
      body.duplicate_candidates,
      nodes.map(([distance_m, id, tags, signals]) => ({
        type: 'node',
        id,
        distance_m,
        tags,
        signals,
      })),
    );
    return body;
  };

  describe('blocking signals', () => {
    it('1: a public bookcase within 25 m (20 m, no name or address)', async () => {
      const body = await blockedBy(await library(), [
        20,
        11,
        { amenity: 'public_bookcase' },
        ['bookcase_within_25m'],
      ]);
      expect(codes(body)).toEqual(['possible_duplicate']);
      expect(body.checked_at).toBe(t.clock.date().toISOString());
    });

    it('2: a public bookcase within 100 m with the same normalized name (80 m)', async () => {
      await blockedBy(await library(), [
        80,
        12,
        { amenity: 'public_bookcase', name: '  BÜCHERSCHRANK am Markt! ' },
        ['bookcase_same_name'],
      ]);
    });

    it('2 also for a way, measured to its representative point (60 m)', async () => {
      const lib = await library();
      fake.seedQuery(
        near(lib, 60, 21, { amenity: 'public_bookcase', name: 'Bücherschrank am Markt' }, 'way'),
      );
      const body = await check(lib);
      expect(body.status).toBe('possible_duplicate');
      expect(body.duplicate_candidates).toMatchObject([
        { type: 'way', id: 21, signals: ['bookcase_same_name'] },
      ]);
    });

    it('3: a public bookcase within 100 m with the same street and house number (90 m)', async () => {
      await blockedBy(await library(), [
        90,
        13,
        { amenity: 'public_bookcase', 'addr:street': 'marktplatz', 'addr:housenumber': '1' },
        ['bookcase_same_address'],
      ]);
    });

    it('4: a matching brand or operator together with a compatible book-sharing tag', async () => {
      await blockedBy(
        await library(),
        [
          50,
          14,
          { amenity: 'give_box', operator: 'bürgerverein altstadt' },
          ['brand_or_operator_match'],
        ],
        [70, 15, { amenity: 'public_bookcase', brand: 'BÜCHERWELT' }, ['brand_or_operator_match']],
      );
    });

    it('5: an element already linked to another library, whatever its tags', async () => {
      const lib = await library();
      const other = await library();
      await sql(
        db.url,
        `INSERT INTO map_contributions (library_id, status, mapdb_element_type, mapdb_element_id)
         VALUES ($1, 'already_present', 'node', 16)`,
        [other.id],
      );
      await blockedBy(lib, [
        40,
        16,
        { shop: 'books', name: 'Antiquariat' },
        ['element_already_linked'],
      ]);
    });

    it('several signals on one candidate are all listed', async () => {
      const lib = await library();
      fake.seedQuery(near(lib, 5, 17, SAME_BOOKCASE_TAGS));
      const body = await check(lib);
      expect(body.duplicate_candidates[0].signals).toEqual([
        'bookcase_within_25m',
        'bookcase_same_name',
        'bookcase_same_address',
        'brand_or_operator_match',
      ]);
    });
  });

  describe('no block', () => {
    it('nothing blocks at 101 m: the same bookcase (name, address, operator) just outside the radius', async () => {
      const lib = await library();
      fake.seedQuery(near(lib, 101, 18, SAME_BOOKCASE_TAGS));
      const body = await check(lib);
      expect([body.status, body.duplicate_candidates, body.eligible]).toEqual([
        'no_match',
        [],
        true,
      ]);
      const [query] = fake.requestsTo('query');
      expect(new URLSearchParams(query.body).get('data')).toContain('(around:100,');
    });

    it('other nearby features are warnings only: library, give box, book shop, unnamed bookcase at 26 m', async () => {
      const lib = await library();
      fake.seedQuery(
        near(lib, 10, 31, { amenity: 'library', name: 'Stadtbibliothek' }),
        near(lib, 15, 32, { shop: 'books', operator: 'Bürgerverein Altstadt' }),
        near(lib, 26, 33, { amenity: 'public_bookcase' }),
        near(lib, 30, 34, { amenity: 'give_box', name: 'Verschenkbox' }),
      );
      const body = await check(lib);
      expect([body.status, body.eligible, codes(body)]).toEqual(['no_match', true, []]);
      expect(
        body.duplicate_candidates.map((c: Snapshot) => [`${c.type}/${c.id}`, c.signals]),
      ).toEqual([
        ['node/31', []],
        ['node/32', []],
        ['node/33', []],
        ['node/34', []],
      ]);
      const preview = await adminGet(t.http, staff.access, `/${lib.slug}/preview`);
      expect(preview.status).toBe(200);
      expect(preview.body.eligible).toBe(true);
      for (const id of [31, 32, 33, 34]) {
        expect(preview.body.warnings.some((w: string) => w.includes(`node/${id}`))).toBe(true);
      }
    });
  });

  describe('snapshot and audit', () => {
    it('stores only relevant public tags, and records the snapshot in a duplicate_check event', async () => {
      const lib = await library();
      fake.seedQuery(
        near(lib, 12, 41, {
          amenity: 'public_bookcase',
          name: 'Offener Bücherschrank',
          brand: 'Bücherwelt',
          operator: 'Bürgerverein Altstadt',
          'addr:street': 'Marktplatz',
          'addr:housenumber': '3',
          'contact:email': 'kiosk-owner@example.net',
          phone: '+49 761 000000',
          description: 'Run by Frau Beispiel, call her at home',
          note: 'private remark',
          fixme: 'check opening hours',
          image: 'https://images.example.net/bookcase.jpg',
          website: 'https://example.net/bookcase',
        }),
      );
      const body = await check(lib);
      expect(body.duplicate_candidates[0].tags).toEqual({
        amenity: 'public_bookcase',
        name: 'Offener Bücherschrank',
        brand: 'Bücherwelt',
        operator: 'Bürgerverein Altstadt',
        'addr:street': 'Marktplatz',
        'addr:housenumber': '3',
      });
      const stored = await contributionRow(db.url, lib.id);
      expect(stored?.duplicate_candidates).toEqual(body.duplicate_candidates);
      expect(JSON.stringify(stored)).not.toMatch(
        /kiosk-owner|\+49|Frau Beispiel|private remark|images\.example/,
      );

      expect(body.events).toEqual([
        {
          type: 'duplicate_check',
          outcome: 'possible_duplicate',
          actor: { id: staff.id, username: staff.username },
          attempt_key: null,
          details: { candidates: body.duplicate_candidates, warnings: expect.any(Array) },
          created_at: expect.any(String),
        },
      ]);
      const events = await eventRows(db.url, lib.id);
      expect(JSON.stringify(events)).not.toMatch(/kiosk-owner|\+49|Frau Beispiel|private remark/);
    });

    it('a passing check moves possible_duplicate to no_match once the candidate is gone', async () => {
      const lib = await library();
      fake.seedQuery(near(lib, 3, 42, { amenity: 'public_bookcase' }));
      expect((await check(lib)).status).toBe('possible_duplicate');
      fake.clearQuery();
      const body = await check(lib);
      expect([body.status, codes(body)]).toEqual(['no_match', []]);
      expect(body.events.map((e: { outcome: string }) => e.outcome)).toEqual([
        'possible_duplicate',
        'no_match',
      ]);
    });
  });
});
