/**
 * Shared set-up of the duplicate-check suites: an app whose checks go stale after MAX_AGE_SECONDS, the fake reset
 * before each test, and the helpers both suites use.
 */
import type { FakeQueryElement } from '../support/fake-map-server.js';
import { DEG_PER_M, adminPost, mapSuite, submitLibrary, type SubmittedLibrary } from './helpers.js';

export const MAX_AGE_SECONDS = 600;

/** The suite's library as the map would tag it: a public bookcase of the same name, address and operator. */
export const SAME_BOOKCASE_TAGS: Record<string, string> = {
  amenity: 'public_bookcase',
  name: 'Bücherschrank am Markt',
  'addr:street': 'Marktplatz',
  'addr:housenumber': '1',
  operator: 'Bürgerverein Altstadt',
};

export function duplicateCheckSuite() {
  const suite = mapSuite({
    env: { MAPDB_DUPLICATE_CHECK_MAX_AGE_SECONDS: String(MAX_AGE_SECONDS) },
  });

  beforeEach(() => suite.fake.reset());

  /** A library submitted with a known name, address, brand and operator. */
  const library = () =>
    submitLibrary(suite.t.http, suite.owner, suite.staff, {
      name: 'Bücherschrank am Markt',
      address: 'Marktplatz 1',
      brand: 'Bücherwelt',
      operator: 'Bürgerverein Altstadt',
    });

  /** A feature `metres` north of the library. */
  const near = (
    lib: SubmittedLibrary,
    metres: number,
    id: number,
    tags: Record<string, string>,
    type: FakeQueryElement['type'] = 'node',
  ): FakeQueryElement => ({ type, id, lat: lib.lat + metres * DEG_PER_M, lon: lib.lng, tags });

  /** POST /{slug}/check, which must answer 200; its body. */
  const check = async (lib: SubmittedLibrary) => {
    const res = await adminPost(suite.t.http, suite.staff.access, `/${lib.slug}/check`);
    expect(res.status).toBe(200);
    return res.body;
  };

  return { suite, library, near, check };
}
