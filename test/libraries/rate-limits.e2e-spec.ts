/**
 * The library routes' rate-limit tiers (spec Limits, decisions.md §2) with the spec's default limits: read 60 and
 * write 10 per 300 s window, one counter per endpoint, failed requests counted, the 429 before anything else.
 */
import request from 'supertest';
import { bearer, loginUser } from '../support/auth.js';
import {
  countLibraries,
  createLibrary,
  insertLibrary,
  multipart,
  submissionFields,
  submitLibrary,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const TOO_MANY = {
  message: 'Too many requests. Please try again later.',
  details: { retry_after: expect.any(Number) },
};

describe('library rate limits', () => {
  let approvedSlug: string;

  const { db, t, alice } = useTestSuite({
    env: { RATE_LIMIT_REGISTER: '50' },
    users: { alice: 'user' },
  });

  beforeAll(async () => {
    approvedSlug = (await insertLibrary(db.url, { slug: 'limited-approved' })).slug;
  });

  /** Each test starts with fresh windows (and so needs a fresh access token). */
  beforeEach(async () => {
    t.clock.advance(301_000);
    alice.access = (await loginUser(t.http, alice.username, alice.password)).access;
  });

  async function expectLimited(
    send: () => Promise<request.Response>,
    limit: number,
    okStatus: number,
  ) {
    for (let index = 0; index < limit; index += 1) expect((await send()).status).toBe(okStatus);
    const res = await send();
    expect([res.status, res.body]).toEqual([429, TOO_MANY]);
    expect(res.body.details.retry_after).toBeGreaterThanOrEqual(1);
    expect(res.body.details.retry_after).toBeLessThanOrEqual(300);
    return res;
  }

  it.each([
    ['GET /libraries/', '/api/v1/libraries/'],
    ['GET /libraries/latest', '/api/v1/libraries/latest'],
    ['GET /libraries/countries/', '/api/v1/libraries/countries/'],
    ['GET /libraries/{slug}', '/api/v1/libraries/limited-approved'],
  ])('%s: read tier, 60 per window', async (_label, path) => {
    await expectLimited(() => request(t.http).get(path), 60, 200);
  });

  it('GET /libraries/mine: read tier; its counter is its own', async () => {
    await expectLimited(
      () =>
        request(t.http).get('/api/v1/libraries/mine').set('Authorization', bearer(alice.access)),
      60,
      200,
    );
    expect((await request(t.http).get('/api/v1/libraries/latest')).status).toBe(200);
  });

  it('POST /libraries/: write tier, 10 per window; refused requests count; the 11th stores nothing', async () => {
    for (let index = 0; index < 5; index += 1)
      expect((await submitLibrary(t.http, alice.access)).status).toBe(201);
    for (let index = 0; index < 5; index += 1) {
      expect(
        (await submitLibrary(t.http, alice.access, submissionFields({ latitude: '100' }))).status,
      ).toBe(422);
    }
    const rows = await countLibraries(db.url);
    const res = await submitLibrary(t.http, alice.access);
    expect([res.status, res.body]).toEqual([429, TOO_MANY]);
    expect(await countLibraries(db.url)).toBe(rows);
    t.clock.advance(240_000);
    expect((await submitLibrary(t.http, alice.access)).status).toBe(429);
    t.clock.advance(61_000);
    const { access } = await loginUser(t.http, alice.username, alice.password);
    expect((await submitLibrary(t.http, access)).status).toBe(201);
  });

  it('PATCH /libraries/{slug}: write tier', async () => {
    const created = await createLibrary(t.http, alice.access);
    let count = 0;
    await expectLimited(
      () =>
        multipart(
          request(t.http).patch(`/api/v1/libraries/${created.slug}`),
          { name: `Edit ${(count += 1)}` },
          null,
          alice.access,
        ),
      10,
      200,
    );
  });

  it('POST /libraries/{slug}/report: write tier', async () => {
    await expectLimited(
      () =>
        multipart(
          request(t.http).post(`/api/v1/libraries/${approvedSlug}/report`),
          { reason: 'other' },
          null,
          alice.access,
        ),
      10,
      201,
    );
  });
});
