/**
 * The public list's prepared statements run on PostgreSQL's generic plan from their first execution on a connection
 * (issue 22, brief 22e). They are written so that their plan does not depend on their values (list-plan-cache spec),
 * so the custom plans PostgreSQL made at the first five executions of each statement on each pooled connection only
 * cost planning (1–5 ms for a place list at 1M): about 24 list shapes × 10 connections × 5 after every start. The app
 * runs here on one pooled connection, so the statements its lists prepared can be read from pg_prepared_statements
 * afterwards, and the setting that forced the generic plan must not outlive the read (the next statements on the
 * connection, prepared or not, plan as PostgreSQL chooses).
 */
import request from 'supertest';
import { DataSource } from 'typeorm';
import { insertSpreadLibraries } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

/** Lists of every prepared kind: default, country, has_photo, one place, both places, a circle, nearest first. */
const LISTS = [
  '',
  'country=DE&page=2',
  'has_photo=true&page_size=10',
  'country=AT&has_photo=false',
  'city=ber',
  'city=wi&country=AT&has_photo=true',
  'postal_code=12&page=3',
  'postal_code=105&country=FR',
  'city=ly&postal_code=1',
  'city=berlin&postal_code=0&country=DE&has_photo=false',
  'lat=50&lng=10&radius_km=20',
  'lat=49&lng=9&radius_km=50&country=DE&has_photo=true',
  'lat=50&lng=10&page=4',
  // Past the end: the last page is read again (pageQuery).
  'city=ber&page=500',
  'lat=50&lng=10&radius_km=5&page=300',
];

describe('list statements on their generic plan from the first execution', () => {
  const { db, t } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false', DATABASE_POOL_SIZE: '1' },
  });

  beforeAll(async () => {
    await insertSpreadLibraries(db.url, 900, {
      prefix: 'generic',
      west: 8,
      south: 48,
      span: 4,
      pendingEvery: 10,
    });
  });

  async function preparedStatements(): Promise<
    { name: string; generic: number; custom: number }[]
  > {
    return t.app.get(DataSource).query(
      `SELECT name, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
         WHERE name LIKE 'lib\\_%' AND name NOT LIKE '%\\_generic' ORDER BY name`,
    );
  }

  it('plans no list statement with its values, on any execution', async () => {
    for (const list of LISTS) {
      const page = await request(t.http).get(`/api/v1/libraries/?${list}`).expect(200);
      expect(page.body.pagination.total).toBeGreaterThan(0);
    }
    const statements = await preparedStatements();
    // One statement per list at least (the grid's, a past-the-end page's …).
    expect(statements.length).toBeGreaterThanOrEqual(LISTS.length);
    expect(statements.filter((statement) => statement.custom > 0)).toEqual([]);
    expect(statements.every((statement) => statement.generic >= 1)).toBe(true);
    // Again, with other values: the same statements, still never planned with their values.
    for (const list of LISTS) {
      await request(t.http)
        .get(`/api/v1/libraries/?${list.replace('ber', 'lin').replace('12', '3')}`)
        .expect(200);
    }
    expect((await preparedStatements()).filter((statement) => statement.custom > 0)).toEqual([]);
  });

  it('leaves the connection planning as PostgreSQL chooses after each read', async () => {
    const mode = async () =>
      (
        await t.app
          .get(DataSource)
          .query<{ mode: string }[]>(`SELECT current_setting('plan_cache_mode') AS mode`)
      )[0].mode;
    for (const list of LISTS) {
      await request(t.http).get(`/api/v1/libraries/?${list}`).expect(200);
      expect({ list, mode: await mode() }).toEqual({ list, mode: 'auto' });
    }
  });
});
