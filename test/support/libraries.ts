import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import type pg from 'pg';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, type HttpTarget } from './auth.js';
import { withClient } from './database.js';
import type { TestApp } from './app.js';

/** The 23 fields of the public library item (api-spec.md, decisions.md §4), sorted. */
export const ITEM_FIELDS = [
  'address',
  'brand',
  'capacity',
  'city',
  'contact',
  'country',
  'created_at',
  'description',
  'id',
  'is_favourited',
  'is_indoor',
  'is_lit',
  'lat',
  'lng',
  'name',
  'operator',
  'photo_url',
  'postal_code',
  'slug',
  'source',
  'thumbnail_url',
  'website',
  'wheelchair_accessible',
];

export const sortedKeys = (value: object): string[] => Object.keys(value).sort();
export const withFields = (...extra: string[]): string[] => [...ITEM_FIELDS, ...extra].sort();

/** UTC ISO 8601 with milliseconds and `Z`. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The optional fields of a library nobody filled in, as the API answers them. */
export const BLANK_OPTIONAL_FIELDS = {
  address: '',
  postal_code: '',
  wheelchair_accessible: '',
  capacity: null,
  is_indoor: null,
  is_lit: null,
  website: '',
  contact: '',
  source: '',
  operator: '',
  brand: '',
};

/** The pagination of a list whose `total` items fit on page 1 at the default page size. */
export const onePage = (total: number) => ({
  page: 1,
  page_size: 20,
  total,
  total_pages: 1,
  has_next: false,
  has_previous: false,
});

/** A list answer without items at the default page size. */
export const EMPTY_PAGE = { items: [], pagination: onePage(0) };

export const INVALID_PHOTO = {
  message: 'Upload a valid image in JPEG, PNG, or WEBP format.',
  details: null,
};
export { NOT_FOUND, UNAUTHORIZED } from './errors.js';

// ---------------------------------------------------------------------------------------------------------------
// Rows written directly with SQL (search, proximity and visibility fixtures)
// ---------------------------------------------------------------------------------------------------------------

/** Columns of `libraries` a fixture may set; anything left out takes the column default. */
export interface LibraryFixture {
  slug?: string;
  name?: string;
  description?: string;
  address?: string;
  city?: string;
  country?: string;
  postal_code?: string;
  lat?: number;
  lng?: number;
  status?: 'approved' | 'pending' | 'rejected';
  rejection_reason?: string;
  photo_key?: string | null;
  thumbnail_key?: string | null;
  created_at?: string | Date;
  created_by?: number | null;
  submission_origin?: string;
  source?: string;
  external_id?: string;
  mapdb_submission_allowed?: boolean;
  mapdb_submission_allowed_at?: Date | null;
  wheelchair_accessible?: string;
  capacity?: number | null;
  is_indoor?: boolean | null;
  is_lit?: boolean | null;
  website?: string;
  contact?: string;
  operator?: string;
  brand?: string;
  /** A staged owner edit, as JSON text. */
  pending_changes?: string | null;
}

export interface InsertedLibrary {
  id: number;
  slug: string;
}

let fixtureSequence = 0;

/** Inserts one row per fixture (status approved, city Berlin, DE, at 52.52/13.405 unless overridden). */
export async function insertLibraries(
  target: string | pg.Client,
  fixtures: LibraryFixture[],
): Promise<InsertedLibrary[]> {
  const run = async (client: pg.Client) => {
    const inserted: InsertedLibrary[] = [];
    for (const fixture of fixtures) inserted.push(await insertOne(client, fixture));
    return inserted;
  };
  return typeof target === 'string' ? withClient(target, run) : run(target);
}

export async function insertLibrary(
  target: string | pg.Client,
  fixture: LibraryFixture = {},
): Promise<InsertedLibrary> {
  return (await insertLibraries(target, [fixture]))[0];
}

async function insertOne(client: pg.Client, fixture: LibraryFixture): Promise<InsertedLibrary> {
  fixtureSequence += 1;
  const { lat = 52.52, lng = 13.405, ...rest } = fixture;
  const values: Record<string, unknown> = {
    slug: `fixture-${process.pid}-${fixtureSequence}`,
    city: 'Berlin',
    country: 'DE',
    status: 'approved',
    ...rest,
  };
  const columns = Object.keys(values);
  const params = Object.values(values);
  params.push(lng, lat);
  const placeholders = columns.map((_, index) => `$${index + 1}`);
  const rows = await client.query<InsertedLibrary>(
    `INSERT INTO libraries (${columns.join(', ')}, location)
     VALUES (${placeholders.join(', ')},
             ST_SetSRID(ST_MakePoint($${params.length - 1}, $${params.length}), 4326)::geography)
     RETURNING id, slug`,
    params,
  );
  return rows.rows[0];
}

/** The stored row of a library (every column but the generated and geography ones), or undefined. */
export async function libraryRow(
  databaseUrl: string,
  slugOrId: string | number,
): Promise<Record<string, unknown> | undefined> {
  const column = typeof slugOrId === 'number' ? 'id' : 'slug';
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query(
      `SELECT id, slug, name, description, address, city, country, postal_code, wheelchair_accessible, capacity,
              is_indoor, is_lit, website, contact, operator, brand, source, external_id, photo_key, thumbnail_key,
              ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lng, status, rejection_reason,
              mapdb_submission_allowed, mapdb_submission_allowed_at, submission_origin, created_by,
              pending_changes, pending_photo, ai_generated_fields, created_at, updated_at
       FROM libraries WHERE ${column} = $1`,
      [slugOrId],
    );
    return rows[0];
  });
}

export async function countLibraries(databaseUrl: string): Promise<number> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM libraries');
    return rows[0].n;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------------------------------

export interface JpegOptions {
  /** EXIF with a camera make and GPS coordinates. */
  exif?: boolean;
  /** EXIF orientation tag (6 = rotate 90° clockwise to display). */
  orientation?: number;
  /** JPEG quality; low numbers make small files. */
  quality?: number;
}

const canvas = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({
    create: { width, height, channels, background: { r: 40, g: 120, b: 200, alpha: 0.6 } },
  });

export async function jpeg(
  width: number,
  height: number,
  options: JpegOptions = {},
): Promise<Buffer> {
  let image = canvas(width, height).jpeg({ quality: options.quality ?? 80 });
  if (options.exif) {
    image = image.withExif({
      IFD0: { Make: 'FixtureCam', Model: 'GPS-9000' },
      IFD3: {
        GPSLatitudeRef: 'N',
        GPSLatitude: '52/1 31/1 12/1',
        GPSLongitudeRef: 'E',
        GPSLongitude: '13/1 24/1 18/1',
      },
    });
  }
  if (options.orientation) image = image.withMetadata({ orientation: options.orientation });
  return image.toBuffer();
}

export const png = (width: number, height: number): Promise<Buffer> =>
  canvas(width, height, 4).png().toBuffer();

export const webp = (width: number, height: number): Promise<Buffer> =>
  canvas(width, height).webp().toBuffer();

/**
 * A valid JPEG of exactly `bytes` bytes: a small image padded with comment (COM) segments, which decoders skip.
 */
export async function jpegOfSize(bytes: number): Promise<Buffer> {
  const image = await jpeg(64, 48);
  const segments: Buffer[] = [];
  let remaining = bytes - image.length;
  if (remaining < 0) throw new Error(`jpegOfSize: ${bytes} bytes is smaller than the image itself`);
  while (remaining > 0) {
    let size = Math.min(65_537, remaining);
    if (remaining - size > 0 && remaining - size < 4) size -= 4;
    if (size < 4) throw new Error('jpegOfSize: cannot pad by fewer than 4 bytes');
    const segment = Buffer.alloc(size);
    segment.set([0xff, 0xfe], 0);
    segment.writeUInt16BE(size - 2, 2);
    segments.push(segment);
    remaining -= size;
  }
  return Buffer.concat([image.subarray(0, 2), ...segments, image.subarray(2)]);
}

export const GIF_1X1 = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

/** Incompressible bytes behind a JPEG signature: an upload of exactly `bytes` that is not a decodable image. */
export function jpegLookalike(bytes: number): Buffer {
  const data = Buffer.alloc(bytes);
  let state = 0x2545f491;
  for (let index = 0; index < bytes; index += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    data[index] = state & 0xff;
  }
  data.set([0xff, 0xd8, 0xff, 0xe0], 0);
  return data;
}

/** A PNG whose header claims width × height pixels with almost no pixel data behind it (a decompression bomb). */
export function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(2, 9); // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---------------------------------------------------------------------------------------------------------------
// Multipart requests
// ---------------------------------------------------------------------------------------------------------------

export type FormFields = Record<string, string | number | boolean | undefined>;

/** A valid submission's text fields. */
export function submissionFields(overrides: FormFields = {}): FormFields {
  return {
    name: 'Bücherschrank am Markt',
    description: 'A red telephone box full of books.',
    address: 'Marktplatz 1',
    city: 'Freiburg',
    country: 'DE',
    postal_code: '79098',
    latitude: 47.9959,
    longitude: 7.8522,
    ...overrides,
  };
}

export interface PhotoPart {
  data: Buffer;
  filename?: string;
  contentType?: string;
}

let smallJpeg: Promise<Buffer> | undefined;
/** A small valid JPEG, made once per file. */
export function defaultPhoto(): Promise<Buffer> {
  smallJpeg ??= jpeg(64, 48);
  return smallJpeg;
}

/**
 * A multipart request: every field as a form part, `photo` attached unless null. Fields that are `undefined` in
 * `fields` are left out.
 */
export function multipart(
  test: request.Test,
  fields: Record<string, string | number | boolean | undefined>,
  photo: PhotoPart | null,
  token?: string,
): request.Test {
  let req = test;
  if (token) req = req.set('Authorization', bearer(token));
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) req = req.field(name, String(value));
  }
  if (photo) {
    req = req.attach('photo', photo.data, {
      filename: photo.filename ?? 'photo.jpg',
      contentType: photo.contentType ?? 'image/jpeg',
    });
  }
  return req;
}

/** POST /libraries/ with the given fields (defaults: a valid submission) and photo (default: a small JPEG). */
export async function submitLibrary(
  http: HttpTarget,
  token: string | undefined,
  fields: Record<string, string | number | boolean | undefined> = submissionFields(),
  photo?: PhotoPart | null,
): Promise<request.Response> {
  const part = photo === undefined ? { data: await defaultPhoto() } : photo;
  return multipart(request(http).post('/api/v1/libraries/'), fields, part, token);
}

/** Submits and expects 201; answers the created library's body. */
export async function createLibrary(
  http: HttpTarget,
  token: string,
  overrides: FormFields = {},
  photo?: PhotoPart,
): Promise<Record<string, unknown> & { id: number; slug: string }> {
  const res = await submitLibrary(http, token, submissionFields(overrides), photo);
  if (res.status !== 201) {
    throw new Error(
      `createLibrary: POST /libraries/ answered ${res.status} ${JSON.stringify(res.body)}`,
    );
  }
  return res.body;
}

// ---------------------------------------------------------------------------------------------------------------
// Media
// ---------------------------------------------------------------------------------------------------------------

/** Every stored media file (relative keys, sorted): the files under MEDIA_ROOT, or the bucket's live objects. */
export async function mediaFiles(
  target: string | Pick<TestApp, 'config' | 's3'>,
): Promise<string[]> {
  if (typeof target !== 'string' && target.s3) {
    const prefix =
      target.config.mediaStorage.kind === 's3' ? target.config.mediaStorage.prefix : '';
    return (await target.s3.server.keys(target.s3.bucket, prefix))
      .map((key) => key.slice(prefix.length))
      .filter((key) => !key.startsWith('_withdrawn/'));
  }
  const root = typeof target === 'string' ? target : target.config.mediaRoot;
  const files: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(root, path));
    }
  };
  walk(root);
  return files.sort();
}

/** The withdrawn media files (relative keys, sorted): `<MEDIA_ROOT>.withdrawn`, or the bucket's `_withdrawn/`. */
export async function withdrawnFiles(t: Pick<TestApp, 'config' | 's3'>): Promise<string[]> {
  if (t.s3) {
    const prefix = `${t.config.mediaStorage.kind === 's3' ? t.config.mediaStorage.prefix : ''}_withdrawn/`;
    return (await t.s3.server.keys(t.s3.bucket, prefix)).map((key) => key.slice(prefix.length));
  }
  return mediaFiles(`${t.config.mediaRoot}.withdrawn`);
}

/** GET a media URL through the app and answer its bytes. */
export async function fetchMedia(http: HttpTarget, url: string): Promise<Buffer> {
  const res = await request(http)
    .get(url)
    .buffer(true)
    .parse((response, callback) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => callback(null, Buffer.concat(chunks)));
    });
  if (res.status !== 200) throw new Error(`fetchMedia: GET ${url} answered ${res.status}`);
  return res.body as Buffer;
}

/**
 * Inserts `rows` libraries in one statement, spread over a square of `span` degrees from `west`/`south` (a fixed
 * pseudo-random pattern, so plans and counts repeat), in three cities and countries, every second one with a photo,
 * one a minute from 2025, and every `pendingEvery`-th pending (none by default); then VACUUM ANALYZEs `libraries`,
 * so the planner sees the rows as autovacuum would leave them. Slugs are `<prefix>-<i>`.
 */
export async function insertSpreadLibraries(
  url: string,
  rows: number,
  options: { prefix: string; west: number; south: number; span: number; pendingEvery?: number },
): Promise<void> {
  const { prefix, west, south, span, pendingEvery = 0 } = options;
  await withClient(url, async (client) => {
    await client.query(
      `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, status, photo_key, created_at)
       SELECT $2 || '-' || i, 'Bookcase ' || i, 'Shelf ' || i, 'Street ' || i,
              (ARRAY['Berlin', 'Wien', 'Lyon'])[1 + i % 3], (ARRAY['DE', 'AT', 'FR'])[1 + i % 3],
              lpad((i * 37 % 99999)::text, 5, '0'),
              ST_SetSRID(ST_MakePoint($3 + (i * 7919 % 1000) * $5 / 1000.0,
                                      $4 + (i * 104729 % 1000) * $5 / 1000.0), 4326)::geography,
              CASE WHEN $6 > 0 AND i % $6 = 0 THEN 'pending' ELSE 'approved' END,
              CASE WHEN i % 2 = 0 THEN 'photos/' || i || '.jpg' END,
              timestamptz '2025-01-01' + i * interval '1 minute'
       FROM generate_series(1, $1) AS i`,
      [rows, prefix, west, south, span, pendingEvery],
    );
    await client.query('VACUUM ANALYZE libraries');
  });
}
