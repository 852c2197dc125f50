import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, GuardedClient } from '../../src/database/data-source-options.js';
import { PreparedRead, type StatementInfo } from '../../src/database/prepared-reader.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

type Gc = (options?: { type: 'major' | 'minor'; execution: 'sync' }) => void;

/** V8's gc() (the flag set at run time, the function taken from a fresh context). */
function exposedGc(): Gc {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Gc;
}

function oldSpaceUsed(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!
    .space_used_size;
}

/** 100 rows of about 2 KB each: a result of about 200 KB of strings. */
const WIDE = `SELECT repeat('x', 2000) || g AS t FROM generate_series(1, 100) g`;
const ROWS = 100;
const RESULT_BYTES = 100 * 2000;

/**
 * The pool's client (GuardedClient, issue 22): a query's answer dies young. pg's `query_timeout` and its promise form
 * wrapped each query's callback in a closure V8 allocates in the old generation; that dead closure kept the query's
 * rows alive through the scavenges after it, which then promoted them. Measured here as the growth of the old
 * space over reads whose results are dropped at once, with two scavenges after each read and no mark-compact.
 * The client-side timeout itself still fails a hung query and ends its client.
 */
describeWithDatabaseServer('the pool client on PostgreSQL', () => {
  const gc = exposedGc();
  let testDb: TestDatabase;
  let pool: pg.Pool;
  let dataSource: DataSource;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    const options = buildDataSourceOptions(testDb.url, 2, {
      statementTimeoutSeconds: 30,
      idleInTransactionTimeoutSeconds: 0,
      poolWaitSeconds: 10,
      poolIdleSeconds: 300,
      queryTimeoutSeconds: 35,
    });
    pool = new pg.Pool({ connectionString: testDb.url, ...(options.extra as pg.PoolConfig) });
    dataSource = await new DataSource({ ...options, migrations: [] }).initialize();
  });

  afterAll(async () => {
    await pool?.end();
    await dataSource?.destroy();
    await testDb?.drop();
  });

  /** Runs `read` on a pooled client (as TypeORM's query runner and PreparedReader do). */
  async function onClient(read: (client: pg.PoolClient) => Promise<unknown[]>): Promise<unknown[]> {
    const client = await pool.connect();
    try {
      return await read(client);
    } finally {
      client.release();
    }
  }

  /** Reads and drops the rows (in a frame of its own, so no register of the caller still holds them at the GC). */
  async function count(read: () => Promise<unknown[]>): Promise<number> {
    return (await read()).length;
  }

  /** Old-space bytes gained per byte read over 30 reads, each followed by two scavenges. */
  async function promotedShare(read: () => Promise<unknown[]>): Promise<number> {
    for (let i = 0; i < 5; i++) expect(await count(read)).toBe(ROWS); // warm: code, statement, connections
    gc({ type: 'major', execution: 'sync' });
    const before = oldSpaceUsed();
    let rows = 0;
    for (let i = 0; i < 30; i++) {
      rows += await count(read);
      gc({ type: 'minor', execution: 'sync' });
      gc({ type: 'minor', execution: 'sync' });
    }
    expect(rows).toBe(30 * ROWS);
    // pg 8.23's wrappers: about 1.06 (every result promoted); GuardedClient's: 0.05–0.15.
    return (oldSpaceUsed() - before) / (30 * RESULT_BYTES);
  }

  it('promise form (as TypeORM queries): the rows are not promoted', async () => {
    const share = await promotedShare(() =>
      onClient(async (client) => (await client.query(WIDE)).rows),
    );
    expect(share).toBeLessThan(0.25);
  });

  it('callback form: the rows are not promoted', async () => {
    const share = await promotedShare(() =>
      onClient(
        (client) =>
          new Promise((resolve, reject) =>
            client.query(WIDE, [], (error, result) =>
              error ? reject(error) : resolve(result.rows),
            ),
          ),
      ),
    );
    expect(share).toBeLessThan(0.25);
  });

  it('a submittable (PreparedReader’s PreparedRead): the rows are not promoted', async () => {
    const statement: StatementInfo = { digest: 'wide', shape: null };
    const share = await promotedShare(() =>
      onClient(
        (client) =>
          new Promise<unknown[]>((resolve, reject) => {
            client.query(
              new PreparedRead('probe_wide', WIDE, [], statement, (error, result) =>
                error ? reject(error) : resolve(result.rows),
              ),
            );
          }),
      ),
    );
    expect(share).toBeLessThan(0.25);
  });

  it('TypeORM through the pool: the rows are not promoted', async () => {
    const share = await promotedShare(() => dataSource.query<unknown[]>(WIDE));
    expect(share).toBeLessThan(0.25);
  });

  it('a query without an answer within query_timeout fails with pg’s error and its client is discarded', async () => {
    const client = new GuardedClient({ connectionString: testDb.url, query_timeout: 300 });
    await client.connect();
    const started = Date.now();
    await expect(client.query('SELECT pg_sleep(5)')).rejects.toThrow('Query read timeout');
    expect(Date.now() - started).toBeLessThan(3000);
    // Ending: pg-pool discards such a client on release instead of handing it to the next request.
    expect((client as unknown as { _ending: boolean })._ending).toBe(true);
    await expect(client.query('SELECT 1')).rejects.toThrow();

    const own = new pg.Pool({
      connectionString: testDb.url,
      max: 1,
      Client: GuardedClient,
      query_timeout: 300,
    });
    try {
      const first = await own.connect();
      const callbackError = await new Promise<Error | undefined>((resolve) =>
        first.query('SELECT pg_sleep(5)', (error) => resolve(error)),
      );
      expect(callbackError?.message).toBe('Query read timeout');
      first.release();
      expect(own.totalCount).toBe(0);
      // An answer in time: the timer is stopped and the same client serves the next query.
      const second = await own.connect();
      expect((await second.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await second.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
      second.release();
      expect(own.totalCount).toBe(1);
    } finally {
      await own.end();
    }
  });
});
