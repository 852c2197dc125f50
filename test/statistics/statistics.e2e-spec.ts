/**
 * GET /statistics/ (api-spec "Statistics", decisions §4): exact figures for a hand-built data set, the daily/monthly
 * rule around 90 days (FakeClock), the empty database, the 5-minute in-process cache and the read tier.
 */
import request from 'supertest';
import { bearer, makeStaff, registerUser } from '../support/auth.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { insertCommunityPhoto } from '../support/community.js';
import { createTestDatabase, withClient, type TestDatabase } from '../support/database.js';
import { insertLibraries, insertLibrary, type LibraryFixture } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const DAY_MS = 86_400_000;
const NOW = Date.parse('2026-06-15T12:00:00.000Z');
const EMPTY = {
  total_approved: 0,
  total_with_image: 0,
  top_countries: [],
  cumulative_series: [],
  granularity: 'daily',
};
const PRIMARY = { photo_key: 'libraries/fx/p.jpg', thumbnail_key: 'libraries/fx/p_thumb.jpg' };

const statistics = (t: TestApp) => request(t.http).get('/api/v1/statistics/');

/** A test database whose sessions run in a far-from-UTC time zone, so local-time bucketing would show. */
async function createFarFromUtcDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  const name = new URL(db.url).pathname.slice(1);
  await withClient(db.url, (client) =>
    client.query(`ALTER DATABASE ${name} SET timezone TO 'Pacific/Kiritimati'`),
  );
  return db;
}

describe('GET /statistics/ on a hand-built data set', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createFarFromUtcDatabase();
    const at = (iso: string, country: string, extra: LibraryFixture = {}): LibraryFixture => ({
      created_at: iso,
      country,
      ...extra,
    });
    const [
      ,
      ,
      onlyApprovedCommunity,
      onlyPendingCommunity,
      primaryAndCommunity,
      onlyRejectedCommunity,
    ] = await insertLibraries(db.url, [
      at('2025-11-20T10:00:00.000Z', 'DE', PRIMARY),
      at('2025-11-25T10:00:00.000Z', 'DE'),
      at('2026-01-10T10:00:00.000Z', 'DE'),
      // 23:30 UTC on the last day of January: January in UTC, February in the database's local time.
      at('2026-01-31T23:30:00.000Z', 'FR'),
      at('2026-03-01T00:00:00.000Z', 'FR', PRIMARY),
      at('2026-03-15T10:00:00.000Z', 'IT'),
      at('2026-06-14T10:00:00.000Z', 'IT'),
      ...['SE', 'PT', 'PL', 'NL', 'ES', 'DK', 'CH', 'BE', 'AT'].map((country) =>
        at('2026-04-10T10:00:00.000Z', country),
      ),
      // Not approved: counted nowhere, not even as the oldest library or in a country.
      ...Array.from({ length: 5 }, () =>
        at('2025-06-01T10:00:00.000Z', 'US', { status: 'pending', ...PRIMARY }),
      ),
      at('2025-09-01T10:00:00.000Z', 'FR', { status: 'rejected', ...PRIMARY }),
    ]);
    await insertCommunityPhoto(db.url, {
      library_id: onlyApprovedCommunity.id,
      status: 'approved',
    });
    await insertCommunityPhoto(db.url, {
      library_id: onlyApprovedCommunity.id,
      status: 'approved',
    });
    await insertCommunityPhoto(db.url, { library_id: onlyPendingCommunity.id, status: 'pending' });
    await insertCommunityPhoto(db.url, { library_id: primaryAndCommunity.id, status: 'approved' });
    await insertCommunityPhoto(db.url, {
      library_id: onlyRejectedCommunity.id,
      status: 'rejected',
    });
    t = await createTestApp({
      databaseUrl: db.url,
      env: { RATE_LIMIT_ENABLED: 'false' },
      clock: new FakeClock(NOW),
    });
  });

  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('answers the exact figures, publicly', async () => {
    const res = await statistics(t);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_approved: 16,
      // A primary photo, or an approved community photo (a library with both counts once).
      total_with_image: 3,
      top_countries: [
        { country_code: 'DE', country_name: 'Germany', flag_emoji: '🇩🇪', count: 3 },
        { country_code: 'FR', country_name: 'France', flag_emoji: '🇫🇷', count: 2 },
        { country_code: 'IT', country_name: 'Italy', flag_emoji: '🇮🇹', count: 2 },
        { country_code: 'AT', country_name: 'Austria', flag_emoji: '🇦🇹', count: 1 },
        { country_code: 'BE', country_name: 'Belgium', flag_emoji: '🇧🇪', count: 1 },
        { country_code: 'CH', country_name: 'Switzerland', flag_emoji: '🇨🇭', count: 1 },
        { country_code: 'DK', country_name: 'Denmark', flag_emoji: '🇩🇰', count: 1 },
        { country_code: 'ES', country_name: 'Spain', flag_emoji: '🇪🇸', count: 1 },
        { country_code: 'NL', country_name: 'Netherlands', flag_emoji: '🇳🇱', count: 1 },
        { country_code: 'PL', country_name: 'Poland', flag_emoji: '🇵🇱', count: 1 },
      ],
      // Monthly (the oldest approved library is 207 days old): every month from the first to the current one.
      cumulative_series: [
        { period: '2025-11-01', cumulative_count: 2 },
        { period: '2025-12-01', cumulative_count: 2 },
        { period: '2026-01-01', cumulative_count: 4 },
        { period: '2026-02-01', cumulative_count: 4 },
        { period: '2026-03-01', cumulative_count: 6 },
        { period: '2026-04-01', cumulative_count: 15 },
        { period: '2026-05-01', cumulative_count: 15 },
        { period: '2026-06-01', cumulative_count: 16 },
      ],
      granularity: 'monthly',
    });
  });

  it('needs no token, answers with and without the trailing slash, and may be cached publicly for ≤ 300 s', async () => {
    const slash = await request(t.http).get('/api/v1/statistics/');
    const bare = await request(t.http).get('/api/v1/statistics');
    expect([slash.status, bare.status]).toEqual([200, 200]);
    expect(bare.body).toEqual(slash.body);
    const maxAge = /^public, max-age=0, s-maxage=(\d+)$/.exec(
      String(slash.headers['cache-control']),
    );
    expect(maxAge).not.toBeNull();
    expect(Number(maxAge![1])).toBeLessThanOrEqual(300);
  });

  it('never exposes a private field', async () => {
    const res = await statistics(t);
    expect(JSON.stringify(res.body)).not.toMatch(
      /mapdb|submission_origin|created_by|pending_changes/,
    );
  });
});

describe('GET /statistics/ granularity', () => {
  let db: TestDatabase;
  const oldest = Date.parse('2026-03-01T10:00:00.000Z');

  beforeAll(async () => {
    db = await createTestDatabase();
    await insertLibraries(db.url, [
      { created_at: new Date(oldest) },
      { created_at: '2026-03-20T08:00:00.000Z' },
      { created_at: '2026-05-28T23:59:59.999Z' },
      // Older, but not approved: they do not make the data set older.
      { created_at: '2025-01-01T00:00:00.000Z', status: 'pending' },
      { created_at: '2024-01-01T00:00:00.000Z', status: 'rejected' },
    ]);
  });

  afterAll(async () => {
    await db?.drop();
  });

  /** Statistics from a fresh instance (empty cache) whose clock reads `now`. */
  async function statisticsAt(now: number): Promise<Record<string, unknown>> {
    const t = await createTestApp({
      databaseUrl: db.url,
      env: { RATE_LIMIT_ENABLED: 'false' },
      clock: new FakeClock(now),
    });
    try {
      const res = await statistics(t);
      expect(res.status).toBe(200);
      return res.body;
    } finally {
      await t.close();
    }
  }

  const day = (iso: string) => iso.slice(0, 10);

  it('89 days after the oldest approved library: daily, one point for every day up to today', async () => {
    const now = oldest + 89 * DAY_MS;
    const body = await statisticsAt(now);
    expect(body.granularity).toBe('daily');
    const series = body.cumulative_series as { period: string; cumulative_count: number }[];
    expect(series).toHaveLength(90);
    expect(series[0]).toEqual({ period: '2026-03-01', cumulative_count: 1 });
    expect(series.find((point) => point.period === '2026-03-19')).toEqual({
      period: '2026-03-19',
      cumulative_count: 1,
    });
    expect(series.find((point) => point.period === '2026-03-20')).toEqual({
      period: '2026-03-20',
      cumulative_count: 2,
    });
    expect(series.find((point) => point.period === '2026-05-28')).toEqual({
      period: '2026-05-28',
      cumulative_count: 3,
    });
    expect(series.at(-1)).toEqual({
      period: day(new Date(now).toISOString()),
      cumulative_count: 3,
    });
    // Consecutive days, ascending, never decreasing.
    series.forEach((point, index) => {
      expect(point.period).toBe(
        day(new Date(Date.parse('2026-03-01T00:00:00Z') + index * DAY_MS).toISOString()),
      );
      if (index > 0)
        expect(point.cumulative_count).toBeGreaterThanOrEqual(series[index - 1].cumulative_count);
    });
    expect(body.total_approved).toBe(3);
  });

  it('exactly 90 days: still daily', async () => {
    const body = await statisticsAt(oldest + 90 * DAY_MS);
    expect(body.granularity).toBe('daily');
    expect(body.cumulative_series).toHaveLength(91);
  });

  it('91 days after the oldest approved library: monthly, first-of-month periods up to the current month', async () => {
    const body = await statisticsAt(oldest + 91 * DAY_MS);
    expect(body.granularity).toBe('monthly');
    expect(body.cumulative_series).toEqual([
      { period: '2026-03-01', cumulative_count: 2 },
      { period: '2026-04-01', cumulative_count: 2 },
      { period: '2026-05-01', cumulative_count: 3 },
    ]);
  });

  it('a year later the series still reaches the current month, ending at total_approved', async () => {
    const body = await statisticsAt(Date.parse('2027-02-10T00:00:00.000Z'));
    const series = body.cumulative_series as { period: string; cumulative_count: number }[];
    expect(body.granularity).toBe('monthly');
    expect(series.map((point) => point.period)).toEqual([
      '2026-03-01',
      '2026-04-01',
      '2026-05-01',
      '2026-06-01',
      '2026-07-01',
      '2026-08-01',
      '2026-09-01',
      '2026-10-01',
      '2026-11-01',
      '2026-12-01',
      '2027-01-01',
      '2027-02-01',
    ]);
    expect(series.at(-1)!.cumulative_count).toBe(body.total_approved);
  });
});

describe('GET /statistics/ cache (in process, 5 minutes)', () => {
  let db: TestDatabase;
  let t: TestApp;

  useTestSuite(
    {
      env: { RATE_LIMIT_ENABLED: 'false' },
      clock: new FakeClock(NOW),
    },
    (s) => ({ db, t } = s),
  );

  it('answers zeros, [] and daily on an empty database', async () => {
    const res = await statistics(t);
    expect([res.status, res.body]).toEqual([200, EMPTY]);
  });

  it('an approval shows only once the clock has moved past 300 s', async () => {
    t.clock.advance(301_000);
    // Only a pending library: nothing is approved yet.
    const library = await insertLibrary(db.url, {
      status: 'pending',
      created_at: new Date(t.clock.now() - DAY_MS),
    });
    expect((await statistics(t)).body).toEqual(EMPTY);

    const staff = await registerUser(t.http);
    await makeStaff(db.url, staff.id);
    const approve = await request(t.http)
      .patch(`/api/v1/libraries/moderation/${library.slug}`)
      .set('Authorization', bearer(staff.access))
      .send({ status: 'approved' });
    expect(approve.status).toBe(200);

    expect((await statistics(t)).body).toEqual(EMPTY);
    t.clock.advance(299_000);
    expect((await statistics(t)).body).toEqual(EMPTY);
    t.clock.advance(2_000);
    const fresh = await statistics(t);
    expect(fresh.body).toEqual({
      total_approved: 1,
      total_with_image: 0,
      top_countries: [{ country_code: 'DE', country_name: 'Germany', flag_emoji: '🇩🇪', count: 1 }],
      cumulative_series: [
        { period: day(new Date(t.clock.now() - DAY_MS)), cumulative_count: 1 },
        { period: day(new Date(t.clock.now())), cumulative_count: 1 },
      ],
      granularity: 'daily',
    });
  });

  const day = (date: Date) => date.toISOString().slice(0, 10);
});

describe('GET /statistics/ rate limit', () => {
  let t: TestApp;

  useTestSuite(
    {
      env: { RATE_LIMIT_READ: '3', RATE_LIMIT_WRITE: '100' },
    },
    (s) => ({ t } = s),
  );

  it('is in the read tier', async () => {
    for (let index = 0; index < 3; index += 1) expect((await statistics(t)).status).toBe(200);
    const res = await statistics(t);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      message: 'Too many requests. Please try again later.',
      details: { retry_after: expect.any(Number) },
    });
  });
});
