/**
 * Media on S3-compatible storage (s3rver on loopback, the app on the real AWS SDK v3): /media/ answers as it does
 * from local disk (same URLs, same headers, conditional and range requests), or 302 to MEDIA_PUBLIC_BASE_URL;
 * withdrawn objects are never served; the orphan sweep works on the bucket; `media-to-s3` moves a local
 * installation into a bucket idempotently and resumably.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { MediaStorage } from '../../src/common/media/media-storage.js';
import { OrphanMediaSweep } from '../../src/common/media/orphan-media-sweep.js';
import { registerUser, type RegisteredUser } from '../support/auth.js';
import { TEST_JWT_SECRET, type TestApp } from '../support/app.js';
import {
  createLibrary,
  fetchMedia,
  jpeg,
  mediaFiles,
  withdrawnFiles,
} from '../support/libraries.js';
import { cleanEnv, runNode } from '../support/processes.js';
import { startS3Server } from '../support/s3-server.js';
import { temporaryDirectory, useTestSuite } from '../support/suite.js';

const CLI = 'dist/src/cli/main.js';
/** The headers a media response carries whatever the storage (values that differ per file are matched by form). */
const MEDIA_HEADERS = {
  'content-type': 'image/jpeg',
  'cache-control': 'public, max-age=300',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; img-src 'self'; sandbox",
  'cross-origin-resource-policy': 'same-site',
  'accept-ranges': 'bytes',
};

const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};

describe('media on S3-compatible storage', () => {
  const {
    db,
    t: local,
    fakes: { s3 },
    startApp,
  } = useTestSuite({
    // The local app's media folder is a fake of the suite, so it is removed with it.
    fakes: async () => ({
      s3: await startS3Server(),
      media: temporaryDirectory('bookcase-media-local-'),
    }),
    env: ({ media }) => ({ RATE_LIMIT_ENABLED: 'false', MEDIA_ROOT: media.path }),
  });
  let bucketApp: TestApp;
  let bucket: string;
  let alice: RegisteredUser;
  let photo: Buffer;

  beforeAll(async () => {
    bucket = await s3.createBucket();
    bucketApp = await startApp({
      env: { RATE_LIMIT_ENABLED: 'false', ...s3.env(bucket), S3_PREFIX: 'site/' },
    });
    alice = await registerUser(bucketApp.http);
    photo = await jpeg(640, 480);
  });

  it('stores a submission in the bucket under S3_PREFIX and serves it with the local headers', async () => {
    const created = await createLibrary(bucketApp.http, alice.access, {}, { data: photo });
    const url = created.photo_url as string;
    const key = url.replace(/^\/media\//, '');
    expect(await s3.keys(bucket)).toEqual(
      [`site/${key}`, `site/${key.replace(/\.jpg$/, '_thumb.jpg')}`].sort(),
    );
    expect(await mediaFiles(local)).toEqual([]); // nothing on the local disk

    const res = await request(bucketApp.http).get(url).buffer(true).parse(binary).expect(200);
    expect(res.headers).toMatchObject(MEDIA_HEADERS);
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+"$/);
    expect(Date.parse(res.headers['last-modified'])).not.toBeNaN();
    expect(Number(res.headers['content-length'])).toBe((res.body as Buffer).length);
    expect((await fetchMedia(bucketApp.http, url)).equals(res.body as Buffer)).toBe(true);
    // What the enrichment worker and the export read through the interface.
    const stored = bucketApp.app.get(MediaStorage);
    expect((await stored.read(key)).equals(res.body as Buffer)).toBe(true);
    expect(
      await stored.read(key).then(
        () => true,
        () => false,
      ),
    ).toBe(true);
    await expect(stored.read('libraries/00/missing.jpg')).rejects.toThrow(/not found/);
    const listed = [];
    for await (const item of stored.list('libraries')) listed.push(item);
    expect(listed).toEqual(
      expect.arrayContaining([
        { key, modifiedAt: expect.any(Date), size: (res.body as Buffer).length },
      ]),
    );

    // The same file from local disk answers the same header names (serve-static's ETag form differs).
    const storedLocally = local.app.get(MediaStorage);
    await storedLocally.put(key, res.body as Buffer, 'image/jpeg');
    const fromDisk = await request(local.http).get(url).expect(200);
    expect(fromDisk.headers).toMatchObject(MEDIA_HEADERS);
    const names = (headers: Record<string, unknown>) =>
      Object.keys(headers)
        .filter((name) => !['date', 'connection', 'keep-alive', 'x-request-id'].includes(name))
        .sort();
    expect(names(res.headers)).toEqual(names(fromDisk.headers));

    await request(bucketApp.http)
      .get(url)
      .set('If-None-Match', res.headers.etag)
      .expect(304)
      .expect('Cache-Control', 'public, max-age=300')
      .expect('ETag', res.headers.etag);
    const head = await request(bucketApp.http).head(url).expect(200);
    expect(head.headers).toMatchObject(MEDIA_HEADERS);
    const range = await request(bucketApp.http)
      .get(url)
      .set('Range', 'bytes=0-9')
      .buffer(true)
      .parse(binary)
      .expect(206);
    expect(range.headers['content-range']).toBe(`bytes 0-9/${(res.body as Buffer).length}`);
    expect((range.body as Buffer).equals((res.body as Buffer).subarray(0, 10))).toBe(true);
  });

  it('answers the 404 envelope for a missing object, a withdrawn one, and paths that cannot be media keys', async () => {
    const created = await createLibrary(bucketApp.http, alice.access, {}, { data: photo });
    const key = (created.photo_url as string).replace(/^\/media\//, '');
    const media = bucketApp.app.get(MediaStorage);
    await media.withdraw(key);
    const inBucket = { config: bucketApp.config, s3: { server: s3, bucket } };
    expect(await withdrawnFiles(inBucket)).toEqual(expect.arrayContaining([key]));
    for (const path of [
      `/media/${key}`,
      `/media/_withdrawn/${key}`,
      '/media/libraries/00/missing.jpg',
      '/media/..%2F..%2Fetc%2Fpasswd',
      '/media/',
    ]) {
      const res = await request(bucketApp.http).get(path).expect(404);
      expect(res.body).toEqual({ message: 'Not found.', details: null });
    }
    await media.restore(key);
    await request(bucketApp.http).get(`/media/${key}`).expect(200);
    expect(await withdrawnFiles(inBucket)).not.toContain(key);
  });

  it('redirects with 302 to MEDIA_PUBLIC_BASE_URL when it is set', async () => {
    const cdn = await startApp({
      env: {
        RATE_LIMIT_ENABLED: 'false',
        ...s3.env(bucket),
        S3_PREFIX: 'site/',
        MEDIA_PUBLIC_BASE_URL: 'https://cdn.example.org/site/',
      },
    });
    try {
      const res = await request(cdn.http).get('/media/libraries/ab/abc.jpg').expect(302);
      expect(res.headers.location).toBe('https://cdn.example.org/site/libraries/ab/abc.jpg');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      await request(cdn.http).get('/media/_withdrawn/libraries/ab/abc.jpg').expect(404);
    } finally {
      await cdn.close();
    }
  });

  it('the orphan sweep removes unreferenced objects from the bucket and keeps referenced ones', async () => {
    const created = await createLibrary(bucketApp.http, alice.access, {}, { data: photo });
    const key = (created.photo_url as string).replace(/^\/media\//, '');
    const media = bucketApp.app.get(MediaStorage);
    await media.put('libraries/ff/orphan.jpg', photo, 'image/jpeg');
    const result = await bucketApp.app.get(OrphanMediaSweep).sweep(60_000, Date.now() + 3_600_000);
    expect(result?.removed).toContain('libraries/ff/orphan.jpg');
    expect(result?.removed).not.toContain(key);
    expect(
      await media.read('libraries/ff/orphan.jpg').then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    expect(
      await media.read(key).then(
        () => true,
        () => false,
      ),
    ).toBe(true);
  });

  it('media-to-s3 copies a local installation into a bucket, idempotently and resumably', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bookcase-media-to-s3-'));
    try {
      const root = join(dir, 'media');
      const target = await s3.createBucket('moved');
      // A library submitted on a local installation, a withdrawn file, and a partial write left by a crash.
      const before = await startApp({
        env: { RATE_LIMIT_ENABLED: 'false', MEDIA_ROOT: root },
      });
      let created;
      try {
        created = await createLibrary(before.http, alice.access, {}, { data: photo });
      } finally {
        await before.close();
      }
      mkdirSync(join(`${root}.withdrawn`, 'photos', 'aa'), { recursive: true });
      writeFileSync(join(`${root}.withdrawn`, 'photos', 'aa', 'gone.jpg'), photo);
      writeFileSync(join(root, 'libraries', 'partial.jpg.0000.tmp'), 'x');
      const key = (created.photo_url as string).replace(/^\/media\//, '');
      const expected = [
        key,
        key.replace(/\.jpg$/, '_thumb.jpg'),
        '_withdrawn/photos/aa/gone.jpg',
      ].sort();

      const env = cleanEnv({
        DATABASE_URL: db.url,
        JWT_SECRET: TEST_JWT_SECRET,
        DATA_DIR: dir,
        MEDIA_ROOT: root,
        ...s3.env(target),
      });
      const first = await runNode(CLI, ['media-to-s3'], env);
      expect([first.code, first.stdout.trim()]).toEqual([
        0,
        `Copied 3 file(s) to s3://${target}/; 0 already there.`,
      ]);
      expect(first.stderr).toMatch(/Copying media \[.*\] 100% \| 3\/3/);
      expect(await s3.keys(target)).toEqual(expected);

      const again = await runNode(CLI, ['media-to-s3'], env);
      expect([again.code, again.stdout.trim()]).toEqual([
        0,
        `Copied 0 file(s) to s3://${target}/; 3 already there.`,
      ]);

      // An interrupted run: what is missing is copied, the rest skipped.
      await s3.client.send(
        new (await import('@aws-sdk/client-s3')).DeleteObjectCommand({ Bucket: target, Key: key }),
      );
      const resumed = await runNode(CLI, ['media-to-s3'], env);
      expect([resumed.code, resumed.stdout.trim()]).toEqual([
        0,
        `Copied 1 file(s) to s3://${target}/; 2 already there.`,
      ]);
      expect(await s3.keys(target)).toEqual(expected);

      // The moved installation serves the photo from the bucket, byte for byte.
      const after = await startApp({
        env: { RATE_LIMIT_ENABLED: 'false', ...s3.env(target) },
      });
      try {
        const served = await fetchMedia(after.http, created.photo_url as string);
        const onDisk = await (await import('node:fs/promises')).readFile(join(root, key));
        expect(served.equals(onDisk)).toBe(true);
        await request(after.http).get('/media/photos/aa/gone.jpg').expect(404);
      } finally {
        await after.close();
      }

      // Without MEDIA_STORAGE=s3 there is no destination: a usage error.
      const wrong = await runNode(
        CLI,
        ['media-to-s3'],
        cleanEnv({
          DATABASE_URL: db.url,
          JWT_SECRET: TEST_JWT_SECRET,
          DATA_DIR: dir,
          MEDIA_ROOT: root,
        }),
      );
      expect(wrong.code).toBe(64);
      expect(wrong.stderr).toContain('Set MEDIA_STORAGE=s3');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
