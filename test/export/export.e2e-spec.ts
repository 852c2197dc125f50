/**
 * The open-data export (issue 21): the durable job driven by hand (no background polling) with the FakeClock, the
 * files it writes through media storage, and the three public routes with their conditional requests.
 */
import { createHash, randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { ExportJob } from '../../src/export/export.job.js';
import { ScheduledTasksRepository } from '../../src/common/jobs/scheduled-tasks.repository.js';
import { MediaStorage } from '../../src/common/media/media-storage.js';
import {
  DEFAULT_EXPORT_OPTIONS,
  EXPORT_OPTIONS,
  EXPORT_TASK,
} from '../../src/export/export.options.js';
import type { ExportRunResult } from '../../src/export/export.service.js';
import { registerUser } from '../support/auth.js';
import { itWithDatabaseServer, type TestApp } from '../support/app.js';
import { insertCommunityPhoto, insertReport } from '../support/community.js';
import { withClient, type TestDatabase } from '../support/database.js';
import { insertLibrary, ISO_MS, ITEM_FIELDS, mediaFiles } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const DAY = 86_400_000;
const BASE = '/api/v1/libraries/export';
const UNAVAILABLE = {
  message: 'The open-data export is not available yet. Please try again later.',
  details: { retry_after: expect.any(Number) },
};

/** The public item's fields, less `is_favourited` and `lat`/`lng` (the geometry), plus external_id, updated_at. */
const FEATURE_PROPERTIES = [
  ...ITEM_FIELDS.filter((field) => !['is_favourited', 'lat', 'lng'].includes(field)),
  'external_id',
  'updated_at',
].sort();

const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};

/** `attachment; filename=…` (the name is a token, so it may come unquoted). */
const attachment = (name: string) =>
  new RegExp(`^attachment; filename="?${name.replace(/\./g, '\\.')}"?$`);

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface Feature {
  type: string;
  id: number;
  geometry: { type: string; coordinates: [number, number] };
  properties: Record<string, unknown>;
}

describe('open-data export', () => {
  let db: TestDatabase;
  let t: TestApp;
  let job: ExportJob;

  const get = (path: string) => request(t.http).get(`${BASE}/${path}`).buffer(true).parse(binary);
  const exportFiles = async () =>
    (await mediaFiles(t))
      .filter((key) => key.startsWith('exports/'))
      .map((key) => key.slice('exports/'.length));
  const publishedCount = () =>
    withClient(db.url, async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM export_versions WHERE status = 'published'`,
      );
      return rows[0].n;
    });
  async function run(): Promise<ExportRunResult> {
    const result = await job.runNow();
    if (result === 'busy') throw new Error('export unexpectedly busy');
    return result;
  }

  useTestSuite(
    {
      env: { EXPORT_INTERVAL: '1d', RATE_LIMIT_ENABLED: 'false', SERVICE_NAME: 'Book Corners' },
      overrides: [
        {
          provide: EXPORT_OPTIONS,
          useValue: { ...DEFAULT_EXPORT_OPTIONS, autoStart: false, batchSize: 2 },
        },
      ],
    },
    (s) => ({ db, t } = s),
  );

  beforeAll(async () => {
    job = t.app.get(ExportJob);
  });

  it('answers 503 with Retry-After and the error envelope before the first export', async () => {
    for (const path of ['latest.geojson', 'latest.geojson.gz', 'metadata.json']) {
      const res = await request(t.http).get(`${BASE}/${path}`);
      expect([res.status, res.body]).toEqual([503, UNAVAILABLE]);
      expect(Number(res.headers['retry-after'])).toBe(res.body.details.retry_after);
      expect(res.body.details.retry_after).toBeGreaterThanOrEqual(1);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('runs on schedule only when due, and then every EXPORT_INTERVAL', async () => {
    // The task row is created due "now" by the first check; a run fills nothing but the schedule yet.
    const first = await job.runOnce();
    expect(first?.outcome).toBe('created');
    expect(first?.version.record_count).toBe(0);
    expect(await job.runOnce()).toBeNull();
    // Until the next run, Retry-After would name it; the route now serves the (empty) export instead.
    t.clock.advance(DAY - 1000);
    expect(await job.runOnce()).toBeNull();
    t.clock.advance(1000);
    expect((await job.runOnce())?.outcome).toBe('unchanged');
    const empty = await get('latest.geojson');
    expect(empty.status).toBe(200);
    expect(JSON.parse((empty.body as Buffer).toString('utf8'))).toEqual({
      type: 'FeatureCollection',
      licence: 'ODbL-1.0',
      attribution: 'Book Corners contributors and OpenStreetMap contributors',
      features: [],
    });
  });

  it('holds exactly the approved libraries, with only their public fields', async () => {
    t.clock.advance(DAY);
    const owner = await registerUser(t.http);
    const approved = [
      await insertLibrary(db.url, {
        name: 'Lindenweg bookcase',
        address: 'Lindenweg 12',
        lat: 52.5,
        lng: 13.4,
        external_id: 'node/42',
        source: 'osm-import',
        contact: 'Public contact line',
        capacity: 120,
        is_indoor: false,
        photo_key: 'libraries/aa/one.jpg',
        thumbnail_key: 'libraries/aa/one_thumb.jpg',
        created_by: owner.id,
        submission_origin: 'user',
        mapdb_submission_allowed: true,
        pending_changes: JSON.stringify({ name: 'SECRET-STAGED-NAME' }),
      }),
      await insertLibrary(db.url, { name: 'Second', city: 'Köln' }),
      await insertLibrary(db.url, { name: 'Third', city: 'Wien', country: 'AT' }),
    ];
    await insertLibrary(db.url, { name: 'SECRET-PENDING', status: 'pending' });
    await insertLibrary(db.url, {
      name: 'SECRET-REJECTED',
      status: 'rejected',
      rejection_reason: 'SECRET-REASON',
    });
    await insertReport(db.url, { library_id: approved[0].id, details: 'SECRET-REPORT' });
    await insertCommunityPhoto(db.url, { library_id: approved[0].id, caption: 'SECRET-CAPTION' });
    await request(t.http)
      .post(`/api/v1/libraries/${approved[1].slug}/favourite`)
      .set('Authorization', `Bearer ${owner.access}`)
      .expect(201);

    const result = await run();
    expect(result.outcome).toBe('created');
    expect(result.version.record_count).toBe(3);

    const res = await get('latest.geojson');
    expect(res.status).toBe(200);
    const text = (res.body as Buffer).toString('utf8');
    for (const secret of ['SECRET', owner.email, owner.username, 'mapdb', 'pending', 'rejection']) {
      expect(text).not.toContain(secret);
    }
    const collection = JSON.parse(text) as { type: string; features: Feature[] };
    expect(collection.type).toBe('FeatureCollection');
    expect(collection.features.map((feature) => feature.id)).toEqual(approved.map((row) => row.id));
    for (const feature of collection.features) {
      expect(Object.keys(feature).sort()).toEqual(['geometry', 'id', 'properties', 'type']);
      expect(feature.type).toBe('Feature');
      expect(feature.geometry.type).toBe('Point');
      expect(Object.keys(feature.properties).sort()).toEqual(FEATURE_PROPERTIES);
      expect(feature.properties.created_at).toMatch(ISO_MS);
      expect(feature.properties.updated_at).toMatch(ISO_MS);
    }
    expect(collection.features[0]).toEqual({
      type: 'Feature',
      id: approved[0].id,
      geometry: { type: 'Point', coordinates: [13.4, 52.5] },
      properties: expect.objectContaining({
        slug: approved[0].slug,
        name: 'Lindenweg bookcase',
        address: 'Lindenweg 12',
        external_id: 'node/42',
        source: 'osm-import',
        contact: 'Public contact line',
        capacity: 120,
        is_indoor: false,
        is_lit: null,
        photo_url: '/media/libraries/aa/one.jpg',
        thumbnail_url: '/media/libraries/aa/one_thumb.jpg',
      }),
    });
    // The detail route still owns every other /libraries/{slug}.
    expect((await request(t.http).get('/api/v1/libraries/export')).status).toBe(404);
  });

  it('serves each file with checksums that match metadata.json, validators and a versioned name', async () => {
    const meta = await get('metadata.json');
    expect(meta.status).toBe(200);
    expect(meta.headers['content-type']).toMatch(/^application\/json/);
    const metadata = JSON.parse((meta.body as Buffer).toString('utf8'));
    const stem = metadata.files.geojson.name.replace(/\.geojson$/, '');
    expect(stem).toMatch(/^libraries-\d{8}T\d{6}Z$/);
    expect(metadata).toEqual({
      schema_version: 1,
      generated_at: expect.stringMatching(ISO_MS),
      record_count: 3,
      format: expect.any(String),
      files: {
        geojson: { name: `${stem}.geojson`, bytes: expect.any(Number), sha256: expect.any(String) },
        geojson_gz: {
          name: `${stem}.geojson.gz`,
          bytes: expect.any(Number),
          sha256: expect.any(String),
        },
      },
      licence: {
        id: 'ODbL-1.0',
        name: expect.stringContaining('Open Database License'),
        url: 'https://opendatacommons.org/licenses/odbl/1-0/',
        attribution: 'Book Corners contributors and OpenStreetMap contributors',
      },
      photo_rights: expect.stringContaining('not licensed under the ODbL'),
      fields: expect.objectContaining({ external_id: expect.any(String) }),
    });
    expect(Object.keys(metadata.fields).sort()).toEqual(FEATURE_PROPERTIES);
    expect(meta.headers['content-disposition']).toMatch(attachment(`${stem}.metadata.json`));
    expect(meta.headers.etag).toBe(`"${sha256(meta.body as Buffer)}"`);

    const geojson = await get('latest.geojson');
    const gz = await get('latest.geojson.gz');
    const plain = geojson.body as Buffer;
    const zipped = gz.body as Buffer;
    expect(plain.length).toBe(metadata.files.geojson.bytes);
    expect(sha256(plain)).toBe(metadata.files.geojson.sha256);
    expect(zipped.length).toBe(metadata.files.geojson_gz.bytes);
    expect(sha256(zipped)).toBe(metadata.files.geojson_gz.sha256);
    expect(gunzipSync(zipped).equals(plain)).toBe(true);

    for (const [res, name, type, sum, bytes] of [
      [geojson, `${stem}.geojson`, 'application/geo+json', sha256(plain), plain.length],
      [gz, `${stem}.geojson.gz`, 'application/gzip', sha256(zipped), zipped.length],
    ] as const) {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['content-length']).toBe(String(bytes));
      expect(res.headers.etag).toBe(`"${sum}"`);
      expect(res.headers['last-modified']).toBe(new Date(metadata.generated_at).toUTCString());
      expect(res.headers['cache-control']).toBe('public, max-age=0, s-maxage=300');
      expect(res.headers['content-disposition']).toMatch(attachment(name));
    }
  });

  it('answers 304 to If-None-Match and If-Modified-Since (If-None-Match first)', async () => {
    for (const path of ['latest.geojson', 'latest.geojson.gz', 'metadata.json']) {
      const first = await get(path);
      const { etag, 'last-modified': lastModified } = first.headers;
      const byTag = await get(path).set('If-None-Match', etag);
      expect(byTag.status).toBe(304);
      expect((byTag.body as Buffer).length).toBe(0);
      expect(byTag.headers.etag).toBe(etag);
      expect((await get(path).set('If-None-Match', `W/"x", ${etag}`)).status).toBe(304);
      expect((await get(path).set('If-Modified-Since', lastModified)).status).toBe(304);
      const later = new Date(Date.parse(lastModified) + 60_000).toUTCString();
      expect((await get(path).set('If-Modified-Since', later)).status).toBe(304);
      const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
      expect((await get(path).set('If-Modified-Since', earlier)).status).toBe(200);
      expect((await get(path).set('If-None-Match', '"0000"')).status).toBe(200);
      // A non-matching tag wins over a matching date.
      const both = await get(path).set('If-None-Match', '"0000"').set('If-Modified-Since', later);
      expect(both.status).toBe(200);
    }
  });

  it('writes no new version while nothing changed, and a new one when a library does', async () => {
    const before = await get('metadata.json');
    const files = await exportFiles();
    t.clock.advance(DAY);
    const result = await run();
    expect(result.outcome).toBe('unchanged');
    expect(await exportFiles()).toEqual(files);
    const after = await get('metadata.json');
    expect(after.headers.etag).toBe(before.headers.etag);

    await withClient(db.url, (client) =>
      client.query(
        `UPDATE libraries SET status = 'approved', updated_at = now() WHERE name = 'SECRET-PENDING'`,
      ),
    );
    t.clock.advance(DAY);
    const changed = await run();
    expect(changed.outcome).toBe('created');
    expect(changed.version.record_count).toBe(4);
    const next = await get('metadata.json');
    expect(next.headers.etag).not.toBe(before.headers.etag);
    expect(
      (await get('latest.geojson').set('If-None-Match', (await get('latest.geojson')).headers.etag))
        .status,
    ).toBe(304);
  });

  it('gives runs within one second distinct file stems (the bench ran two back to back)', async () => {
    t.clock.advance(DAY);
    const rename = (name: string) =>
      withClient(db.url, (client) =>
        client.query(`UPDATE libraries SET name = $1, updated_at = now() WHERE name = $2`, [
          name,
          name === 'Same-second A' ? 'SECRET-PENDING' : 'Same-second A',
        ]),
      );
    await rename('Same-second A');
    const first = await run();
    expect(first.outcome).toBe('created');
    // The clock does not move: an unchanged run in the same second must not collide with the published stem.
    expect((await run()).outcome).toBe('unchanged');
    await rename('SECRET-PENDING');
    const second = await run();
    expect(second.outcome).toBe('created');
    expect(second.version.file_stem).toBe(`${first.version.file_stem}-2`);
    const metadata = JSON.parse((await get('metadata.json')).body.toString()) as {
      files: { geojson: { name: string } };
    };
    expect(metadata.files.geojson.name).toBe(`${first.version.file_stem}-2.geojson`);
  });

  it('keeps the last 7 versions and removes older ones with their files', async () => {
    for (let index = 0; index < 9; index += 1) {
      await insertLibrary(db.url, { name: `Retention ${index}` });
      t.clock.advance(DAY);
      expect((await run()).outcome).toBe('created');
    }
    expect(await publishedCount()).toBe(7);
    const stems = await withClient(db.url, async (client) => {
      const { rows } = await client.query<{ file_stem: string }>(
        `SELECT file_stem FROM export_versions ORDER BY generated_at`,
      );
      return rows.map((row) => row.file_stem);
    });
    expect(stems).toHaveLength(7);
    expect(await exportFiles()).toEqual(
      stems
        .flatMap((stem) => [`${stem}.geojson`, `${stem}.geojson.gz`, `${stem}.metadata.json`])
        .sort(),
    );
    const meta = JSON.parse(((await get('metadata.json')).body as Buffer).toString('utf8'));
    expect(meta.files.geojson.name).toBe(`${stems[6]}.geojson`);
  });

  it('cleans up a run that died half-way before the next one', async () => {
    const stem = 'libraries-20000101T000000Z';
    await withClient(db.url, (client) =>
      client.query(
        `INSERT INTO export_versions (status, file_stem, generated_at, geojson_key, gz_key, metadata_key)
         VALUES ('building', $1, now(), $2, $3, $4)`,
        [
          stem,
          `exports/${stem}.geojson`,
          `exports/${stem}.geojson.gz`,
          `exports/${stem}.metadata.json`,
        ],
      ),
    );
    await t.app
      .get(MediaStorage)
      .put(`exports/${stem}.geojson`, Buffer.from('{"partial'), 'application/geo+json');
    expect(await exportFiles()).toContain(`${stem}.geojson`);
    t.clock.advance(DAY);
    await run();
    expect(await exportFiles()).not.toContain(`${stem}.geojson`);
    const building = await withClient(db.url, (client) =>
      client.query(`SELECT 1 FROM export_versions WHERE status = 'building'`),
    );
    expect(building.rowCount).toBe(0);
  });

  it('never runs while another instance holds a live lease; takes over once it expires', async () => {
    const other = { name: EXPORT_TASK, leaseId: randomUUID() };
    t.clock.advance(2 * DAY);
    const now = t.clock.now();
    const tasks = t.app.get(ScheduledTasksRepository);
    expect(await tasks.claim(other, new Date(now), new Date(now + 60_000), true)).toBe(true);
    expect(await job.runOnce()).toBeNull();
    expect(await job.runNow()).toBe('busy');
    // The other instance died: once its lease has expired, the due run goes ahead.
    t.clock.advance(60_000);
    expect(await job.runOnce()).not.toBeNull();
    expect(await tasks.renew(other, new Date(t.clock.now() + 60_000))).toBe(false);
  });

  itWithDatabaseServer(
    'skips the task row another session has locked instead of waiting',
    async () => {
      t.clock.advance(2 * DAY);
      await withClient(db.url, async (client) => {
        await client.query('BEGIN');
        await client.query(`SELECT 1 FROM scheduled_tasks WHERE name = $1 FOR UPDATE`, [
          EXPORT_TASK,
        ]);
        try {
          expect(await job.runOnce()).toBeNull();
          expect(await job.runNow()).toBe('busy');
        } finally {
          await client.query('ROLLBACK');
        }
      });
      expect(await job.runOnce()).not.toBeNull();
    },
  );

  it('answers HEAD with the headers alone, and 503 names the next scheduled run once versions are gone', async () => {
    const head = await request(t.http).head(`${BASE}/latest.geojson.gz`);
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect(head.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(head.body).toEqual({});

    await withClient(db.url, (client) => client.query('DELETE FROM export_versions'));
    const next = await withClient(db.url, async (client) => {
      const { rows } = await client.query<{ next_run_at: Date }>(
        'SELECT next_run_at FROM scheduled_tasks WHERE name = $1',
        [EXPORT_TASK],
      );
      return rows[0].next_run_at.getTime();
    });
    const res = await request(t.http).get(`${BASE}/metadata.json`);
    expect([res.status, res.body]).toEqual([503, UNAVAILABLE]);
    const expected = Math.ceil((next - t.clock.now()) / 1000);
    expect(expected).toBeGreaterThan(60);
    expect(res.body.details.retry_after).toBe(expected);
    expect(res.headers['retry-after']).toBe(String(expected));
  });
});

describe('open-data export rate tier', () => {
  let t: TestApp;

  useTestSuite(
    {
      env: { RATE_LIMIT_EXPORT: '3', RATE_LIMIT_READ: '1' },
    },
    (s) => ({ t } = s),
  );

  it('counts against its own `export` tier, not the read tier', async () => {
    for (let index = 0; index < 3; index += 1) {
      expect((await request(t.http).get(`${BASE}/metadata.json`)).status).toBe(503);
    }
    const limited = await request(t.http).get(`${BASE}/metadata.json`);
    expect([limited.status, limited.body]).toEqual([
      429,
      {
        message: 'Too many requests. Please try again later.',
        details: { retry_after: expect.any(Number) },
      },
    ]);
  });
});
