/**
 * Capabilities before writes (the client obligation "query capabilities rather than hard-code element limits"):
 * every write path, the single confirm included, reads GET /api/0.6/capabilities before its first write and keeps
 * them for a bounded age; an API that reports itself readonly or offline refuses the write (409 writes_disabled)
 * before anything is sent.
 */
import { loginUser } from '../support/auth.js';
import { CAPABILITIES_MAX_AGE_MS } from '../../src/map-contribution/domain/timing.js';
import { adminPost, checkPasses, codes, mapSuite, submitLibrary } from './helpers.js';

describe('map contribution capabilities', () => {
  const suite = mapSuite();
  const { fake } = suite;

  beforeEach(() => fake.reset());

  /** A fresh capabilities read is due: move the clock past the kept age (and sign in again on it). */
  const expireCapabilities = async () => {
    suite.t.clock.advance(CAPABILITIES_MAX_AGE_MS + 1000);
    for (const user of [suite.staff, suite.owner])
      user.access = (await loginUser(suite.t.http, user.username, user.password)).access;
  };

  const eligible = async () => {
    const lib = await submitLibrary(suite.t.http, suite.owner, suite.staff);
    await checkPasses(suite.t.http, suite.staff, lib.slug);
    fake.reset();
    return lib;
  };

  it('a single confirm reads the capabilities before its first write, then keeps them for a bounded age', async () => {
    await expireCapabilities();
    const first = await eligible();
    const confirm = await adminPost(suite.t.http, suite.staff.access, `/${first.slug}/confirm`, {});
    expect([confirm.status, confirm.body.status]).toEqual([200, 'contributed']);
    const endpoints = fake.requests.map((r) => r.endpoint);
    expect(endpoints.indexOf('capabilities')).toBeGreaterThanOrEqual(0);
    expect(endpoints.indexOf('capabilities')).toBeLessThan(endpoints.indexOf('changeset.create'));
    expect(fake.requests.find((r) => r.endpoint === 'capabilities')?.path).toBe(
      '/api/0.6/capabilities',
    );

    const second = await eligible();
    await adminPost(suite.t.http, suite.staff.access, `/${second.slug}/confirm`, {});
    expect(fake.requestsTo('capabilities')).toHaveLength(0);

    await expireCapabilities();
    const third = await eligible();
    await checkPasses(suite.t.http, suite.staff, third.slug);
    const again = await adminPost(suite.t.http, suite.staff.access, `/${third.slug}/confirm`, {});
    expect(again.status).toBe(200);
    expect(fake.requestsTo('capabilities')).toHaveLength(1);
  });

  it.each(['readonly', 'offline'] as const)(
    'an API reporting %s refuses the single confirm and the batch: 409 writes_disabled, nothing sent',
    async (status) => {
      await expireCapabilities();
      const lib = await eligible();
      fake.apiStatus = status;
      const confirm = await adminPost(suite.t.http, suite.staff.access, `/${lib.slug}/confirm`, {});
      expect(confirm.status).toBe(409);
      expect(codes(confirm.body.details)).toEqual(['writes_disabled']);
      expect(confirm.body.details.blockers[0].message).toContain(`status as ${status}`);
      const batch = await adminPost(suite.t.http, suite.staff.access, '/batch-confirm', {
        slugs: [lib.slug],
      });
      expect([batch.status, codes(batch.body.details)]).toEqual([409, ['writes_disabled']]);
      expect(fake.writeRequests).toEqual([]);
      expect(fake.changesets.size).toBe(0);

      // A refusing status is never kept: once the API is back online, the next confirm reads it again and writes.
      fake.apiStatus = 'online';
      await checkPasses(suite.t.http, suite.staff, lib.slug);
      const retried = await adminPost(suite.t.http, suite.staff.access, `/${lib.slug}/confirm`, {});
      expect([retried.status, retried.body.status]).toEqual([200, 'contributed']);
    },
  );
});
