/**
 * How many SQL statements the map-contribution use cases issue, counted through TypeORM's logger (every statement
 * the app's DataSource runs passes `logQuery`, transaction control included). The figures are the contract of the
 * use-case split (issue #15): each use case loads the library and the record once and passes them on, and reads
 * never write. docs/architecture.md records the figures before and after the split.
 */
import { DataSource } from 'typeorm';
import {
  adminGet,
  adminPost,
  checkPasses,
  contributionRow,
  mapSuite,
  submitLibrary,
  type SubmittedLibrary,
} from './helpers.js';

describe('map contribution statement counts', () => {
  const suite = mapSuite();
  let statements: string[] | null = null;

  beforeAll(() => {
    const logger = suite.t.app.get(DataSource).logger;
    const logQuery = logger.logQuery.bind(logger);
    logger.logQuery = (query, parameters, runner) => {
      statements?.push(query.replace(/\s+/g, ' ').trim());
      return logQuery(query, parameters, runner);
    };
  });

  /** The statements the app's database connection ran while `work` ran. */
  async function counted<T>(work: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
    statements = [];
    try {
      const result = await work();
      return { result, sql: statements };
    } finally {
      statements = null;
    }
  }

  /** An eligible library with a passed check (allow_write_api already confirmed by the detail read). */
  async function eligible(): Promise<SubmittedLibrary> {
    const lib = await submitLibrary(suite.t.http, suite.owner, suite.staff);
    await checkPasses(suite.t.http, suite.staff, lib.slug);
    const detail = await adminGet(suite.t.http, suite.staff.access, `/${lib.slug}`);
    expect([detail.body.eligible, detail.body.blockers]).toEqual([true, []]);
    return lib;
  }

  it('a confirm runs a fixed, small number of statements', async () => {
    // A first confirm reads the capabilities; the measured one is a steady-state confirm.
    const first = await eligible();
    const warm = await adminPost(suite.t.http, suite.staff.access, `/${first.slug}/confirm`, {});
    expect(warm.body.status).toBe('contributed');

    const lib = await eligible();
    const { result: res, sql } = await counted(() =>
      adminPost(suite.t.http, suite.staff.access, `/${lib.slug}/confirm`, {}),
    );
    expect([res.status, res.body.status]).toEqual([200, 'contributed']);
    expect({ count: sql.length, sql }).toEqual({
      count: CONFIRM_STATEMENTS,
      sql: expect.any(Array),
    });
    // The record exists (the check created it): nothing re-creates it, and the library is read once before the
    // claim and once under its lock.
    expect(sql.filter((text) => text.startsWith('INSERT INTO map_contributions '))).toEqual([]);
    expect(sql.filter((text) => /^SELECT .* FROM libraries l\b/.test(text))).toHaveLength(2);
    expect(sql.filter((text) => text.includes('FROM map_write_state'))).toHaveLength(2);
  });

  it('a refused resolve of a library without a record writes nothing', async () => {
    const lib = await submitLibrary(suite.t.http, suite.owner, suite.staff);
    const { result: res, sql } = await counted(() =>
      adminPost(suite.t.http, suite.staff.access, `/${lib.slug}/resolve`, {
        outcome: 'unclear',
        reason: 'Cannot tell from the imagery.',
      }),
    );
    expect([res.status, res.body.details.blockers[0].code]).toEqual([409, 'possible_duplicate']);
    expect(sql.filter((text) => /^(INSERT|UPDATE|DELETE|WITH)\b/i.test(text))).toEqual([]);
    expect(await contributionRow(suite.db.url, lib.id)).toBeUndefined();
  });

  it('reading a library without a record creates none', async () => {
    const lib = await submitLibrary(suite.t.http, suite.owner, suite.staff);
    const { result: res, sql } = await counted(() =>
      adminGet(suite.t.http, suite.staff.access, `/${lib.slug}`),
    );
    expect([res.status, res.body.status]).toEqual([200, 'unchecked']);
    expect(sql.filter((text) => /^(INSERT|UPDATE|DELETE)\b/i.test(text))).toEqual([]);
    expect(await contributionRow(suite.db.url, lib.id)).toBeUndefined();
  });
});

/**
 * Statements of one steady-state confirm, the authentication of the request included. Before the use-case split
 * (one 1,140-line service) the same confirm ran 37: the write state read 4 times, the library 3 times, the record
 * created-or-read 3 times, and every step in a transaction of its own.
 */
const CONFIRM_STATEMENTS = 21;
