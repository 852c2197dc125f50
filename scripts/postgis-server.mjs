/**
 * Whether a PostgreSQL server with the PostGIS extension answers at `url` (within three seconds). `npm test` and the
 * e2e global setup both ask: without one, the suites run serially on the embedded database.
 */
import pg from 'pg';

export async function serverWithPostgis(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const { rows } = await client.query(
      "SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'",
    );
    return rows.length === 1;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
