import { join } from 'node:path';
import request from 'supertest';
import { insertLibraries } from '../support/libraries.js';
import { useCliSuite } from './cli-support.js';

describe('export (npm run cli -- export)', () => {
  const cli = useCliSuite('export', { media: true });
  const { db } = cli;

  beforeAll(async () => {
    await insertLibraries(db.url, [
      { name: 'One' },
      { name: 'Two' },
      { name: 'Three' },
      { name: 'Hidden', status: 'pending' },
    ]);
  });

  it('writes a version with a progress indication, then reports that nothing changed', async () => {
    const first = await cli.run(['export']);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toMatch(
      /^Exported 3 libraries to libraries-\d{8}T\d{6}Z\.geojson\(\.gz\) in \d+\.\d s\.$/,
    );
    expect(first.stderr).toMatch(/Exporting libraries \[.*\] 100% \| 3\/3/);

    const app = await cli.startApp({ env: { MEDIA_ROOT: join(cli.dir, 'media') } });
    const meta = await request(app.http).get('/api/v1/libraries/export/metadata.json').expect(200);
    const metadata = JSON.parse(meta.text) as {
      record_count: number;
      files: { geojson: { name: string } };
    };
    expect(metadata.record_count).toBe(3);
    expect(first.stdout).toContain(metadata.files.geojson.name.replace(/\.geojson$/, ''));

    const second = await cli.run(['export']);
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).toMatch(
      /^Nothing changed since libraries-\d{8}T\d{6}Z; no new version/,
    );
  });
});
