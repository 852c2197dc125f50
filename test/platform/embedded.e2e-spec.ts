/**
 * The README's promise: with no DATABASE_URL, `npm start` runs on the embedded database in DATA_DIR (PGlite with
 * PostGIS, served over loopback by a child process), and the CLI joins that running server.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import {
  cleanEnv,
  exitOf,
  freePort,
  runNode,
  startNode,
  waitForStatus,
} from '../support/processes.js';
import { EMPTY_PAGE } from '../support/libraries.js';

describe('embedded default database', () => {
  let dataDir: string;
  let server: { child: ChildProcess; output: () => string } | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'bookcase-embedded-'));
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the API from DATA_DIR, lets the CLI join, and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env = cleanEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    server = startNode('dist/src/main.js', env);
    await waitForStatus(`http://127.0.0.1:${port}/ready`, 200, 240_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${server?.output()}`);
    });
    expect(existsSync(join(dataDir, 'db', 'server.json'))).toBe(true);
    expect(existsSync(join(dataDir, 'jwt-secret'))).toBe(true);

    const docs = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
    expect(docs.status).toBe(200);
    const libraries = await fetch(`http://127.0.0.1:${port}/api/v1/libraries/`);
    expect(libraries.status).toBe(200);
    expect(await libraries.json()).toEqual(EMPTY_PAGE);

    // PGlite's PostGIS has no protobuf-c: tiles are encoded in Node (src/map/tile-encoder.ts).
    const tile = await fetch(`http://127.0.0.1:${port}/api/v1/libraries/tiles/0/0/0.mvt`);
    expect(tile.status).toBe(204);
    const feed = await fetch(
      `http://127.0.0.1:${port}/api/v1/libraries/map?bbox=-180,-90,180,90&zoom=2`,
    );
    expect(feed.status).toBe(200);
    expect(await feed.json()).toEqual({ type: 'FeatureCollection', features: [] });
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(200);

    const cli = await runNode(
      'dist/src/cli/main.js',
      ['create-staff', '--username', 'admin', '--email', 'admin@example.com'],
      env,
      undefined,
      'embedded-passphrase\n',
    );
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toMatch(/Created staff user admin/);

    server.child.kill('SIGTERM');
    expect(await exitOf(server.child, 30_000)).toBe(0);
    expect(existsSync(join(dataDir, 'db', 'server.json'))).toBe(false);
  }, 300_000);
});
