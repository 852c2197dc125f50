/**
 * Shared set-up of the adapter suites (`map-query-client`, `map-api-client`): the loopback fake map server, started
 * once per file and reset before each test, and the constants both use. No application and no database.
 */
import { FakeMapServer } from '../support/fake-map-server.js';

export const TOKEN = 'secret-token-4b1d';
export const USER_AGENT = 'bookcase-directory/0.1.0 (+https://bookcases.example/contact)';
export const LAT = 52.52;
export const LNG = 13.405;
/** Degrees of latitude per metre on the mean Earth sphere. */
export const DEG_PER_M = 180 / (Math.PI * 6_371_008.8);
export const BOOKCASE = { amenity: 'public_bookcase' };

/** Registers the hooks of a file's fake map server and returns it (writes allowed, large changesets). */
export function useFakeMapServer(): FakeMapServer {
  const fake = new FakeMapServer({ token: TOKEN });
  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.stop();
  });
  beforeEach(() => {
    fake.reset();
    fake.token = TOKEN;
    fake.permissions = ['allow_read_prefs', 'allow_write_api'];
    fake.maxChangesetElements = 10_000;
  });
  return fake;
}

export async function caught<E extends Error>(promise: Promise<unknown>): Promise<E> {
  try {
    await promise;
  } catch (error) {
    return error as E;
  }
  throw new Error('expected a rejection');
}
