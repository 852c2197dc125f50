import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options.js';
import { Database, type Sql } from '../../src/database/database.js';
import { sqlErrorOf, SQLSTATE } from '../../src/database/sql-error.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * `src/database`'s own `Sql` pieces on a PostgreSQL server: transactions (with their isolation and read-only
 * options), one held connection, and the SQLSTATEs repositories read. A pool of two connections, so a connection
 * that is not given back shows as a pool wait.
 */
describeWithDatabaseServer('Database (Sql, Transaction, withConnection)', () => {
  let testDb: TestDatabase;
  let dataSource: DataSource;
  let db: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    dataSource = await new DataSource({
      ...buildDataSourceOptions(testDb.url, 2),
      migrations: [],
    }).initialize();
    db = new Database(dataSource);
    await db.query('CREATE TABLE sql_probe (id int PRIMARY KEY, label text NOT NULL)');
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await testDb?.drop();
  });

  beforeEach(() => db.query('TRUNCATE sql_probe'));

  const labels = async (sql: Sql = db) =>
    (await sql.query<{ label: string }[]>('SELECT label FROM sql_probe ORDER BY id')).map(
      (row) => row.label,
    );
  const backend = async (sql: Sql) =>
    (await sql.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid'))[0].pid;

  it('commits a transaction that resolves, on one connection, and marks it as a transaction', async () => {
    const result = await db.transaction(async (tx) => {
      expect(tx.inTransaction).toBe(true);
      const pid = await backend(tx);
      await tx.query("INSERT INTO sql_probe VALUES (1, 'one')");
      expect(await labels()).toEqual([]); // not yet committed, seen from the pool
      expect(await backend(tx)).toBe(pid);
      return 'done';
    });

    expect(result).toBe('done');
    expect(await labels()).toEqual(['one']);
  });

  it('rolls back a transaction that throws, and rethrows the error unchanged', async () => {
    const failure = new Error('refused');

    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO sql_probe VALUES (1, 'one')");
        throw failure;
      }),
    ).rejects.toBe(failure);

    expect(await labels()).toEqual([]);
  });

  it('runs a read-only REPEATABLE READ snapshot when asked', async () => {
    await db.query("INSERT INTO sql_probe VALUES (1, 'before')");

    const snapshot = await db.transaction(
      async (tx) => {
        const [{ isolation, read_only }] = await tx.query<
          { isolation: string; read_only: string }[]
        >(
          `SELECT current_setting('transaction_isolation') AS isolation,
                  current_setting('transaction_read_only') AS read_only`,
        );
        const first = await labels(tx);
        await db.query("INSERT INTO sql_probe VALUES (2, 'during')"); // committed meanwhile
        return { isolation, read_only, first, second: await labels(tx) };
      },
      { isolation: 'REPEATABLE READ', readOnly: true },
    );

    expect(snapshot).toEqual({
      isolation: 'repeatable read',
      read_only: 'on',
      first: ['before'],
      second: ['before'],
    });
    expect(await labels()).toEqual(['before', 'during']);
  });

  it('refuses a write in a read-only transaction (SQLSTATE 25006)', async () => {
    const error = await db
      .transaction((tx) => tx.query("INSERT INTO sql_probe VALUES (1, 'x')"), { readOnly: true })
      .then(
        () => null,
        (caught: unknown) => caught,
      );

    expect(sqlErrorOf(error)).toEqual({ code: '25006', constraint: null });
    expect(await labels()).toEqual([]);
  });

  it('holds one connection outside any transaction: session state stays, each statement commits', async () => {
    const other = await db.withConnection(async (sql) => {
      const pid = await backend(sql);
      await sql.query("SELECT set_config('application_name', 'sweep-probe', false)");
      const [{ name }] = await sql.query<{ name: string }[]>(
        "SELECT current_setting('application_name') AS name",
      );
      expect(name).toBe('sweep-probe');
      expect(await backend(sql)).toBe(pid);
      const [{ locked }] = await sql.query<{ locked: boolean }[]>(
        'SELECT pg_try_advisory_lock(4242) AS locked',
      );
      expect(locked).toBe(true);
      // Another connection meets the session lock; a write here is committed at once (no transaction open).
      const [{ taken }] = await db.query<{ taken: boolean }[]>(
        'SELECT pg_try_advisory_lock(4242) AS taken',
      );
      await sql.query("INSERT INTO sql_probe VALUES (1, 'autocommit')");
      const seenByPool = await labels();
      await sql.query('SELECT pg_advisory_unlock(4242)');
      return { taken, seenByPool };
    });

    expect(other).toEqual({ taken: false, seenByPool: ['autocommit'] });
  });

  it('gives the connection back when the work throws (a pool of two stays usable)', async () => {
    for (let i = 0; i < 3; i += 1) {
      await expect(
        db.withConnection(async (sql) => {
          await sql.query('SELECT 1');
          throw new Error('work failed');
        }),
      ).rejects.toThrow('work failed');
    }

    const [[a], [b]] = await Promise.all([
      db.query<{ n: number }[]>('SELECT 1 AS n'),
      db.query<{ n: number }[]>('SELECT 2 AS n'),
    ]);
    expect([a.n, b.n]).toEqual([1, 2]);
  });

  it('tells a unique violation and a NOWAIT lock conflict by SQLSTATE, and nothing else', async () => {
    await db.query("INSERT INTO sql_probe VALUES (1, 'one')");
    const duplicate = await db
      .query("INSERT INTO sql_probe VALUES (1, 'again')")
      .catch((error: unknown) => error);
    expect(sqlErrorOf(duplicate)).toEqual({
      code: SQLSTATE.uniqueViolation,
      constraint: 'sql_probe_pkey',
    });

    const locked = await db.transaction(async (tx) => {
      await tx.query('SELECT id FROM sql_probe WHERE id = 1 FOR UPDATE');
      return db
        .transaction((other) =>
          other.query('SELECT id FROM sql_probe WHERE id = 1 FOR UPDATE NOWAIT'),
        )
        .catch((error: unknown) => error);
    });
    expect(sqlErrorOf(locked)?.code).toBe(SQLSTATE.lockNotAvailable);

    expect(sqlErrorOf(new Error('not a statement'))).toBeNull();
    expect(sqlErrorOf(null)).toBeNull();
  });
});
