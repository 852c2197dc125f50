import request from 'supertest';
import { bearer, type HttpTarget } from './auth.js';
import { queryRows } from './database.js';
export { countRows } from './database.js';
import { defaultPhoto, multipart, type PhotoPart } from './libraries.js';

export { STAFF_REQUIRED } from './errors.js';
export const PHOTO_LIMIT = {
  message: 'You can submit at most 3 photos per library.',
  details: null,
};
export const PHOTO_TOO_LARGE = { message: 'Photo must be 8MB or smaller.', details: null };

/** Every error of a 422 body points at `loc` (and there is at least one). */
export function expectOnlyErrorsAt(
  body: { details?: { errors?: { loc: unknown }[] } },
  loc: (string | number)[],
): void {
  const errors = body.details?.errors ?? [];
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) expect(error.loc).toEqual(loc);
}

// ---------------------------------------------------------------------------------------------------------------
// Rows written directly with SQL
// ---------------------------------------------------------------------------------------------------------------

export interface CommunityPhotoFixture {
  library_id: number;
  created_by?: number | null;
  caption?: string;
  status?: 'pending' | 'approved' | 'rejected';
  photo_key?: string;
  thumbnail_key?: string;
  created_at?: string | Date;
}

let photoSequence = 0;

/** Inserts a community photo row (pending, keys that point at no file, unless overridden); answers its id. */
export async function insertCommunityPhoto(
  databaseUrl: string,
  fixture: CommunityPhotoFixture,
): Promise<number> {
  photoSequence += 1;
  const values: Record<string, unknown> = {
    photo_key: `photos/fx/${process.pid}-${photoSequence}.jpg`,
    thumbnail_key: `photos/fx/${process.pid}-${photoSequence}_thumb.jpg`,
    ...fixture,
  };
  return insertRow(databaseUrl, 'library_photos', values);
}

export interface ReportFixture {
  library_id: number;
  created_by?: number | null;
  reason?: 'damaged' | 'missing' | 'incorrect_info' | 'inappropriate' | 'other';
  details?: string;
  status?: 'open' | 'resolved' | 'dismissed';
  photo_key?: string | null;
  created_at?: string | Date;
}

/** Inserts a report row (reason `damaged`, open, unless overridden); answers its id. */
export async function insertReport(databaseUrl: string, fixture: ReportFixture): Promise<number> {
  return insertRow(databaseUrl, 'reports', { reason: 'damaged', ...fixture });
}

async function insertRow(
  databaseUrl: string,
  table: string,
  values: Record<string, unknown>,
): Promise<number> {
  const columns = Object.keys(values);
  const placeholders = columns.map((_, index) => `$${index + 1}`);
  const rows = await queryRows<{ id: number }>(
    databaseUrl,
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders.join(', ')}) RETURNING id`,
    Object.values(values),
  );
  return rows[0].id;
}

/** Sets a library's moderation status directly. */
export async function setLibraryStatus(
  databaseUrl: string,
  id: number,
  status: 'approved' | 'pending' | 'rejected',
): Promise<void> {
  await queryRows(databaseUrl, 'UPDATE libraries SET status = $1 WHERE id = $2', [status, id]);
}

/** Sets a community photo's status directly. */
export async function setPhotoStatus(
  databaseUrl: string,
  id: number,
  status: 'approved' | 'pending' | 'rejected',
): Promise<void> {
  await queryRows(databaseUrl, 'UPDATE library_photos SET status = $1 WHERE id = $2', [status, id]);
}

// ---------------------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------------------

export interface PhotoPost {
  caption?: string;
  /** null: no file part at all. Default: a small valid JPEG. */
  photo?: PhotoPart | null;
}

/** POST /libraries/{slug}/photo (multipart). */
export async function postPhoto(
  http: HttpTarget,
  token: string | undefined,
  slug: string,
  post: PhotoPost = {},
): Promise<request.Response> {
  const part = post.photo === undefined ? { data: await defaultPhoto() } : post.photo;
  return multipart(
    request(http).post(`/api/v1/libraries/${slug}/photo`),
    { caption: post.caption },
    part,
    token,
  );
}

/** A GET of `/api/v1{path}` with an optional bearer token. */
export function getAs(http: HttpTarget, path: string, token?: string): request.Test {
  return call(http, 'get', path, token);
}

export type Method = 'get' | 'post' | 'patch' | 'delete';

/** A request to `/api/v1{path}` with an optional bearer token and JSON body. */
export function call(
  http: HttpTarget,
  method: Method,
  path: string,
  token?: string,
  body?: object,
): request.Test {
  let req = request(http)[method](`/api/v1${path}`);
  if (token) req = req.set('Authorization', bearer(token));
  return body === undefined ? req : req.send(body);
}
