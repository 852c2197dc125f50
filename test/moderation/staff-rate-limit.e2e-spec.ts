/**
 * The staff tier (issue 18): requests authenticated as staff on staff endpoints count per user against
 * RATE_LIMIT_STAFF (default 600 per window); anonymous and ordinary callers keep the spec's per-IP tiers.
 */
import { makeStaff, registerUser, type RegisteredUser } from '../support/auth.js';
import { createTestApp, describeWithDatabaseServer } from '../support/app.js';
import { getAs } from '../support/community.js';
import { createTestDatabase } from '../support/database.js';
import { useTestSuite } from '../support/suite.js';

const TOO_MANY = {
  message: 'Too many requests. Please try again later.',
  details: { retry_after: expect.any(Number) },
};

describe('staff rate-limit tier', () => {
  const { t, staff, reader } = useTestSuite({
    env: { RATE_LIMIT_REGISTER: '50' },
    users: { staff: 'staff', reader: 'user' },
  });

  const statuses = async (count: number, path: string, token?: string): Promise<number[]> => {
    const seen: number[] = [];
    for (let index = 0; index < count; index += 1)
      seen.push((await getAs(t.http, path, token)).status);
    return seen;
  };

  it('a staff user makes 200 moderation reads in one window without a 429, while anonymous reads stop at 60', async () => {
    const staffReads = await statuses(200, '/libraries/moderation/summary', staff.access);
    expect(staffReads.filter((status) => status !== 200)).toEqual([]);

    // Same client IP: the staff reads did not use the anonymous budget, which is still the spec's 60.
    const anonymous = await statuses(60, '/libraries/');
    expect(anonymous.filter((status) => status !== 200)).toEqual([]);
    const over = await getAs(t.http, '/libraries/');
    expect([over.status, over.body]).toEqual([429, TOO_MANY]);

    // Still well inside the staff member's own budget.
    expect((await getAs(t.http, '/libraries/moderation/summary', staff.access)).status).toBe(200);
  });

  it('an ordinary user on a staff endpoint stays on the per-IP read tier', async () => {
    const denied = await statuses(60, '/libraries/moderation/reports', reader.access);
    expect(new Set(denied)).toEqual(new Set([403]));
    const over = await getAs(t.http, '/libraries/moderation/reports', reader.access);
    expect([over.status, over.body]).toEqual([429, TOO_MANY]);
    // The staff member's counter for that endpoint is their own.
    expect((await getAs(t.http, '/libraries/moderation/reports', staff.access)).status).toBe(200);
  });

  // Holds a second database while the outer one is in use: needs a database server.
  describeWithDatabaseServer('with a small staff limit', () => {
    it('RATE_LIMIT_STAFF sets the staff limit, counted per staff user', async () => {
      const smallDb = await createTestDatabase();
      const small = await createTestApp({
        databaseUrl: smallDb.url,
        env: { RATE_LIMIT_STAFF: '3' },
      });
      try {
        const first = await registerUser(small.http);
        const second = await registerUser(small.http);
        await makeStaff(smallDb.url, first.id);
        await makeStaff(smallDb.url, second.id);
        const read = (user: RegisteredUser) =>
          getAs(small.http, '/libraries/moderation/summary', user.access);
        for (let index = 0; index < 3; index += 1) expect((await read(first)).status).toBe(200);
        const over = await read(first);
        expect([over.status, over.body]).toEqual([429, TOO_MANY]);
        expect((await read(second)).status).toBe(200);
      } finally {
        await small.close();
        await smallDb.drop();
      }
    });
  });
});
