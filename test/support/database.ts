import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of this test file's own: a clone of the migrated template (server mode), or the embedded database
 * emptied of rows (embedded mode, where files run one at a time).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (process.env.TEST_DB_MODE === 'embedded') {
    // One shared database, emptied for each new "database": a file may hold only one at a time in this mode
    // (suites that need two at once use describeWithDatabaseServer).
    const url = process.env.TEST_DB_URL!;
    await truncateAll(url);
    return { url, drop: async () => undefined };
  }
  const adminUrl = process.env.TEST_DB_ADMIN_URL;
  const template = process.env.TEST_DB_TEMPLATE;
  if (!adminUrl || !template) throw new Error('e2e global setup did not run');
  // The creation time in the name lets a later run drop leftovers without touching a run still in progress.
  const name = `bookcase_t_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await withClient(adminUrl, (client) =>
    client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`),
  );
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      withClient(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      ).then(() => undefined),
  };
}

async function truncateAll(url: string): Promise<void> {
  await withClient(url, async (client) => {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('schema_migrations', 'spatial_ref_sys')",
    );
    if (rows.length) {
      // The append-only audit table refuses TRUNCATE through a trigger; a test reset may bypass it.
      await client.query("SET session_replication_role = 'replica'");
      await client.query(
        `TRUNCATE ${rows.map((row) => `"${row.tablename}"`).join(', ')} RESTART IDENTITY CASCADE`,
      );
      await client.query("SET session_replication_role = 'origin'");
    }
  });
}

export async function withClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The rows of one statement, run on a connection of its own (a test's direct reads and writes). */
export async function queryRows<T = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  return withClient(url, async (client) => (await client.query(text, params)).rows as T[]);
}

/** The one number a `SELECT count(*)::int AS n …` statement answers. */
export async function countRows(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<number> {
  return (await queryRows<{ n: number }>(url, text, params))[0].n;
}
