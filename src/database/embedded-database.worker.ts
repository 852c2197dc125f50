/**
 * Child process that owns the embedded PostgreSQL (PGlite with PostGIS) and serves it on loopback through
 * pglite-socket, so the API talks to it with the ordinary `pg` driver and its queries never run on the API's
 * event loop. Started by startEmbeddedDatabase(); exits when its parent goes away.
 *
 * Only one process may open a data directory: the worker holds `<dataDir>/server.json` ({pid, port}) while it
 * runs, and other processes (the CLI next to `npm start`) connect to that server instead of opening the files.
 *
 * With `--prepare` it creates a new database instead (initdb, then the extensions the migrations need) and exits.
 * startEmbeddedDatabase() runs that in a process of its own before the server's: PGlite's WebAssembly heap never
 * shrinks, and initdb and `CREATE EXTENSION postgis` (a 7.5 MB script) leave it about 250 MB larger than a server
 * that opens an existing database ever needs.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lazyPostgis, unpackedPostgis } from './embedded-postgis.js';

const prepare = process.argv[2] === '--prepare';
const [dataDir, portArg] = process.argv.slice(prepare ? 3 : 2);
if (!dataDir) {
  process.stderr.write('usage: embedded-database.worker [--prepare] <data-dir> [port]\n');
  process.exit(2);
}
const serverFile = join(dataDir, 'server.json');

/** postgresql.conf of the embedded server (a development database of a few thousand to 100k rows). */
const EMBEDDED_SETTINGS = [
  'shared_buffers = 16MB',
  'temp_buffers = 2MB',
  'work_mem = 4MB',
  'maintenance_work_mem = 32MB',
];

function open(): Promise<PGlite> {
  return PGlite.create(join(dataDir, 'pgdata'), {
    extensions: { postgis: lazyPostgis(unpackedPostgis(dataDir)), pg_trgm, unaccent },
    // PostgreSQL's defaults size a server: 128 MB of shared buffers alone. One local session needs far less
    // (idle RSS measured with `npm run bench -- --embedded`; docs/architecture.md).
    postgresqlconf: EMBEDDED_SETTINGS,
  });
}

/** `--prepare`: a new database with the migrations' extensions (they create them IF NOT EXISTS). */
async function prepareDatabase(): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(serverFile, JSON.stringify({ pid: process.pid, port: null }));
  const db = await open();
  await db.exec(
    'CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE EXTENSION IF NOT EXISTS unaccent',
  );
  await db.close();
  rmSync(serverFile, { force: true });
  process.exit(0);
}

async function main(): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  // Claim the directory before opening it; the parent checked that no live server holds it.
  writeFileSync(serverFile, JSON.stringify({ pid: process.pid, port: null }));
  const db = await open();
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: Number(portArg ?? 0),
    maxConnections: 100,
  });
  await server.start();
  const port = Number(server.getServerConn().split(':')[1]);
  writeFileSync(serverFile, JSON.stringify({ pid: process.pid, port }));

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    rmSync(serverFile, { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());
  process.on('message', (message) => {
    if (message === 'stop') void stop();
  });
  process.send?.({ type: 'ready', port });
}

(prepare ? prepareDatabase() : main()).catch((error: unknown) => {
  rmSync(serverFile, { force: true });
  process.send?.({
    type: 'error',
    message: error instanceof Error ? error.message : String(error),
  });
  process.exit(1);
});
