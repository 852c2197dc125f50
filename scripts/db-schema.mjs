/**
 * The committed schema (issue 15): `migrations/schema.sql` is what `pg_dump --schema-only` prints for a database that
 * ran every migration, so each schema change is a reviewable diff and a migration edited without it fails CI.
 *
 *   npm run db:schema                         migrate a scratch database, dump it, write migrations/schema.sql
 *   npm run db:schema -- --check              the same, but compare instead of writing (exit 1 on drift)
 *   node scripts/db-schema.mjs --check --database-url URL
 *                                             compare an already migrated database (the e2e drift test's clone)
 *
 * The scratch database lives on TEST_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres),
 * needs PostGIS and `pg_dump` on the PATH, and is dropped afterwards. Run `npm run build` first (npm run db:schema
 * does): the migrations are read from dist/.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaFile = join(root, 'migrations/schema.sql');
const run = promisify(execFile);

/** Lines that differ between machines or runs and say nothing about the schema. */
const VOLATILE = [
  /^-- Dumped (from database|by pg_dump) version /,
  // pg_dump 15.14+ fences its output with a random key (CVE-2025-8714).
  /^\\(un)?restrict /,
];

export function normaliseDump(text) {
  const lines = text.split('\n').filter((line) => !VOLATILE.some((pattern) => pattern.test(line)));
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

export async function dumpSchema(url) {
  const { stdout } = await run(
    'pg_dump',
    ['--schema-only', '--no-owner', '--no-privileges', '--no-tablespaces', `--dbname=${url}`],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return normaliseDump(stdout);
}

/** The first lines where two dumps part, with a little context (enough to see what drifted). */
export function describeDrift(expected, actual) {
  const a = expected.split('\n');
  const b = actual.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA > start && endB > start && a[endA] === b[endB]) {
    endA -= 1;
    endB -= 1;
  }
  const clip = (lines) => lines.slice(0, 40).map((line) => `  ${line}`);
  return [
    `migrations/schema.sql (line ${start + 1}) says:`,
    ...clip(a.slice(start, endA + 1)),
    'the migrated database has:',
    ...clip(b.slice(start, endB + 1)),
  ].join('\n');
}

async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function migratedScratchDatabase(adminUrl) {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'src/database/data-source-options.js')))
    throw new Error('dist/ is missing: run `npm run build` first (npm run db:schema does)');
  const name = `bookcase_schema_${randomBytes(4).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const drop = () =>
    withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  try {
    const { DataSource } = await import('typeorm');
    const { buildDataSourceOptions } = await import(
      join(dist, 'src/database/data-source-options.js')
    );
    const dataSource = new DataSource(buildDataSourceOptions(url.toString(), 2));
    await dataSource.initialize();
    try {
      await dataSource.runMigrations();
    } finally {
      await dataSource.destroy();
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return { url: url.toString(), drop };
}

async function main() {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const at = args.indexOf('--database-url');
  const given = at >= 0 ? args[at + 1] : undefined;
  if (at >= 0 && !given) throw new Error('--database-url needs a URL');

  let actual;
  if (given) {
    actual = await dumpSchema(given);
  } else {
    const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const scratch = await migratedScratchDatabase(adminUrl);
    try {
      actual = await dumpSchema(scratch.url);
    } finally {
      await scratch.drop();
    }
  }

  if (!check) {
    writeFileSync(schemaFile, actual);
    console.log(`wrote migrations/schema.sql (${actual.split('\n').length} lines)`);
    return;
  }
  const expected = existsSync(schemaFile) ? readFileSync(schemaFile, 'utf8') : '';
  if (expected === actual) {
    console.log('migrations/schema.sql matches the migrated schema');
    return;
  }
  console.error(
    'The migrated schema differs from migrations/schema.sql. If the migration is intended, run ' +
      '`npm run db:schema` and commit the file.\n' +
      describeDrift(expected, actual),
  );
  process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 2;
  });
}
