/**
 * Prepares the e2e databases once per run:
 * - a PostgreSQL server with PostGIS (TEST_DATABASE_URL, else 127.0.0.1:5432): migrations are applied once into a
 *   template database named after a hash of the built migrations; every test file clones it (test/support/database.ts);
 * - no such server: the embedded PGlite database (the same one `npm start` uses), shared by files run one at a time.
 * Redis (TEST_REDIS_URL, else 127.0.0.1:6379) is used when it answers. REQUIRE_POSTGRES / REQUIRE_REDIS make a
 * missing server fatal (CI sets both).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { writeFileSync } from 'node:fs';
import { servedDocument } from './served-document.mjs';
import { serverWithPostgis } from '../../scripts/postgis-server.mjs';

const root = new URL('../../', import.meta.url).pathname;
const dist = join(root, 'dist');

function migrationsHash() {
  const dir = join(dist, 'migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.js'))
    .sort()) {
    hash.update(file).update(readFileSync(join(dir, file)));
  }
  return hash.digest('hex').slice(0, 12);
}

async function migrate(url) {
  const { DataSource } = await import('typeorm');
  const { buildDataSourceOptions } = await import(
    join(dist, 'src/database/data-source-options.js')
  );
  const dataSource = new DataSource(buildDataSourceOptions(url, 2));
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}

async function prepareTemplate(adminUrl) {
  const template = `bookcase_tpl_${migrationsHash()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query('SELECT datname FROM pg_database WHERE datname = $1', [
      template,
    ]);
    if (rows.length === 0) {
      const building = `${template}_building_${process.pid}`;
      await admin.query(`CREATE DATABASE ${building}`);
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      await migrate(url.toString());
      // Renaming makes the finished template appear atomically to concurrent runs.
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`).catch(async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${building}`);
      });
    }
    // Templates of other migration sets are dropped, unless TEST_DB_KEEP_TEMPLATES is set (several checkouts with
    // different migrations testing against one server at once).
    // Leftover per-file databases older than six hours (crashed runs); younger ones may belong to a run in progress.
    const cutoff = Math.floor(Date.now() / 1000) - 6 * 3600;
    const stale = await admin.query(
      `SELECT datname FROM pg_database
       WHERE ($3 AND datname LIKE 'bookcase_tpl_%' AND datname <> $1 AND datname NOT LIKE '%_building_%')
          OR (datname ~ '^bookcase_t_[0-9]+_' AND split_part(datname, '_', 3)::bigint < $2)`,
      [template, cutoff, !process.env.TEST_DB_KEEP_TEMPLATES],
    );
    for (const { datname } of stale.rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
  } finally {
    await admin.end();
  }
  return template;
}

async function redisAvailable(url) {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * The document the built app serves, written once per run for the response-contract check of every test app
 * (test/support/response-contract.ts). Read from an app on a database of its own (server mode) or the shared one.
 */
async function writeServedDocument() {
  let document;
  if (process.env.TEST_DB_MODE === 'server') {
    const adminUrl = process.env.TEST_DB_ADMIN_URL;
    const name = `bookcase_t_${Math.floor(Date.now() / 1000)}_openapi_${process.pid}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${process.env.TEST_DB_TEMPLATE}`);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      document = await servedDocument(url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
  } else {
    document = await servedDocument(process.env.TEST_DB_URL);
  }
  const file = join(mkdtempSync(join(tmpdir(), 'bookcase-openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  return file;
}

export default async function globalSetup() {
  // The e2e and browser projects share this setup; a run of both prepares the databases once.
  if (process.env.TEST_DB_MODE) return;
  if (!existsSync(join(dist, 'src/main.js')))
    throw new Error('Build first: npm run build (npm test does).');
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await serverWithPostgis(adminUrl)) {
    process.env.TEST_DB_MODE = 'server';
    process.env.TEST_DB_ADMIN_URL = adminUrl;
    process.env.TEST_DB_TEMPLATE = await prepareTemplate(adminUrl);
  } else {
    if (process.env.REQUIRE_POSTGRES) throw new Error(`No PostgreSQL with PostGIS at ${adminUrl}`);
    process.stdout.write(
      `\nNo PostgreSQL with PostGIS at ${adminUrl}: e2e tests use the embedded database.\n`,
    );
    const { startEmbeddedDatabase } = await import(join(dist, 'src/database/embedded-database.js'));
    const dataDir = mkdtempSync(join(tmpdir(), 'bookcase-embedded-test-'));
    const embedded = await startEmbeddedDatabase(dataDir);
    await migrate(embedded.url);
    globalThis.__bookcaseEmbedded = embedded;
    process.env.TEST_DB_MODE = 'embedded';
    process.env.TEST_DB_URL = embedded.url;
  }
  process.env.TEST_OPENAPI_DOCUMENT = await writeServedDocument();
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await redisAvailable(redisUrl)) {
    process.env.TEST_REDIS_URL = redisUrl;
  } else {
    if (process.env.REQUIRE_REDIS) throw new Error(`No Redis at ${redisUrl}`);
    process.stdout.write(`\nNo Redis at ${redisUrl}: tests that need Redis are skipped.\n`);
    delete process.env.TEST_REDIS_URL;
  }
}
