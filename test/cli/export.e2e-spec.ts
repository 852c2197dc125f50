import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { insertLibraries } from '../support/libraries.js';
import { cleanEnv, runNode } from '../support/processes.js';

const CLI = 'dist/src/cli/main.js';

describe('export (npm run cli -- export)', () => {
  let db: TestDatabase;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let app: TestApp | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'bookcase-export-'));
    env = cleanEnv({
      DATABASE_URL: db.url,
      JWT_SECRET: 'c'.repeat(40),
      DATA_DIR: dir,
      MEDIA_ROOT: join(dir, 'media'),
    });
    await insertLibraries(db.url, [
      { name: 'One' },
      { name: 'Two' },
      { name: 'Three' },
      { name: 'Hidden', status: 'pending' },
    ]);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a version with a progress indication, then reports that nothing changed', async () => {
    const first = await runNode(CLI, ['export'], env);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toMatch(
      /^Exported 3 libraries to libraries-\d{8}T\d{6}Z\.geojson\(\.gz\) in \d+\.\d s\.$/,
    );
    expect(first.stderr).toMatch(/Exporting libraries \[.*\] 100% \| 3\/3/);

    app = await createTestApp({ databaseUrl: db.url, env: { MEDIA_ROOT: join(dir, 'media') } });
    const meta = await request(app.http).get('/api/v1/libraries/export/metadata.json').expect(200);
    const metadata = JSON.parse(meta.text) as {
      record_count: number;
      files: { geojson: { name: string } };
    };
    expect(metadata.record_count).toBe(3);
    expect(first.stdout).toContain(metadata.files.geojson.name.replace(/\.geojson$/, ''));

    const second = await runNode(CLI, ['export'], env);
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).toMatch(
      /^Nothing changed since libraries-\d{8}T\d{6}Z; no new version/,
    );
  });
});
