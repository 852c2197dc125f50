import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import { MediaStorage, assertSafeKey, type StoredMedia } from './media-storage.js';

export interface S3MediaSettings {
  bucket: string;
  region: string;
  /** For MinIO, Garage, R2, Ceph…; null: AWS's own endpoint for the region. */
  endpoint: string | null;
  forcePathStyle: boolean;
  /** null: the SDK's default credential chain (environment, profile, instance role…). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** Prepended to every object key (e.g. `bookcase/`); "" for none. */
  prefix: string;
}

/** Folder (under the prefix) of withdrawn objects: starts with `_`, which no media key can (assertSafeKey). */
export const WITHDRAWN_FOLDER = '_withdrawn';

/** A missing object, as `openRead`/`read` reject for it (the same `code` as the local storage's missing file). */
export class MediaNotFoundError extends Error {
  readonly code = 'ENOENT';
  constructor(key: string) {
    super(`media not found: ${key}`);
    this.name = 'MediaNotFoundError';
  }
}

/** Conditional and range headers of a GET /media request, passed on to the bucket. */
export interface ObjectRequest {
  ifNoneMatch?: string;
  ifModifiedSince?: Date;
  range?: string;
}

/** What the bucket answered for an ObjectRequest: 200/206 with a body, 304/416 without, null when missing. */
export interface ObjectResponse {
  status: 200 | 206 | 304 | 416;
  body: Readable | null;
  contentType?: string;
  contentLength?: number;
  contentRange?: string;
  etag?: string;
  lastModified?: Date;
}

export function isNotFound(error: unknown): boolean {
  if (error instanceof S3ServiceException)
    return error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey';
  return false;
}

function statusOf(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}

/**
 * Media in an S3-compatible bucket through the AWS SDK v3. Objects appear whole or not at all (a PUT, or a
 * multipart upload completed at the end and aborted on failure by lib-storage), so readers never see half a file.
 * Withdrawn objects move to `<prefix>_withdrawn/<key>` (copy, then delete), which /media never serves.
 */
export class S3MediaStorage extends MediaStorage {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;

  constructor(settings: S3MediaSettings, client?: S3Client) {
    super();
    this.bucket = settings.bucket;
    this.prefix = settings.prefix;
    this.client =
      client ??
      new S3Client({
        region: settings.region,
        ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
        forcePathStyle: settings.forcePathStyle,
        ...(settings.credentials ? { credentials: settings.credentials } : {}),
        // Checksums on every request are the SDK's default since 3.729; some S3-compatible servers refuse them.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
  }

  /** The object key of a media key. */
  objectKey(key: string, withdrawn = false): string {
    assertSafeKey(key);
    return `${this.prefix}${withdrawn ? `${WITHDRAWN_FOLDER}/` : ''}${key}`;
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: data,
        ContentType: contentType,
      }),
    );
  }

  putStream(key: string, source: Readable, contentType: string): Promise<void> {
    return this.upload(this.objectKey(key), source, contentType);
  }

  /** A multipart upload for large sources (one PUT below 5 MB), aborted on failure: no part is left behind. */
  private async upload(objectKey: string, source: Readable, contentType: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKey, Body: source, ContentType: contentType },
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      source.destroy();
      throw error;
    }
  }

  async openRead(key: string): Promise<Readable> {
    const response = await this.get(key, {});
    if (!response?.body) throw new MediaNotFoundError(key);
    return response.body;
  }

  /** A GET with the client's conditional/range headers; null when the object does not exist. */
  async get(key: string, request: ObjectRequest): Promise<ObjectResponse | null> {
    let output: GetObjectCommandOutput;
    try {
      output = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.objectKey(key),
          IfNoneMatch: request.ifNoneMatch,
          IfModifiedSince: request.ifModifiedSince,
          Range: request.range,
        }),
      );
    } catch (error) {
      if (isNotFound(error)) return null;
      const status = statusOf(error);
      // A 304 answers a matching If-None-Match (or an unchanged If-Modified-Since): the client's validator stands.
      if (status === 304) return { status, body: null, etag: request.ifNoneMatch };
      if (status === 416) return { status, body: null };
      throw error;
    }
    return {
      status: output.ContentRange ? 206 : 200,
      body: output.Body as Readable,
      contentType: output.ContentType,
      contentLength: output.ContentLength,
      contentRange: output.ContentRange,
      etag: output.ETag,
      lastModified: output.LastModified,
    };
  }

  async delete(key: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
    );
  }

  async read(key: string): Promise<Buffer> {
    const response = await this.get(key, {});
    if (!response?.body) throw new MediaNotFoundError(key);
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** One ListObjectsV2 page (≤ 1000 keys) at a time: a large bucket is never held in memory. */
  async *list(folder: string): AsyncIterable<StoredMedia> {
    assertSafeKey(folder);
    const prefix = `${this.prefix}${folder}/`;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) {
        if (!item.Key) continue;
        yield {
          key: item.Key.slice(this.prefix.length),
          modifiedAt: item.LastModified ?? new Date(0),
          size: item.Size ?? 0,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  withdraw(key: string): Promise<void> {
    return this.move(this.objectKey(key), this.objectKey(key, true));
  }

  restore(key: string): Promise<void> {
    return this.move(this.objectKey(key, true), this.objectKey(key));
  }

  /** Copy then delete (S3 has no rename); a missing source is ignored like the local storage's. */
  private async move(from: string, to: string): Promise<void> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: to,
          CopySource: `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: from }));
  }

  /**
   * Stores a file under `key` (its withdrawn copy with `withdrawn`) unless an object of the same size is there
   * already: what makes `media-to-s3` idempotent and resumable.
   */
  async copyIn(
    key: string,
    size: number,
    open: () => Promise<Readable>,
    contentType: string,
    withdrawn = false,
  ): Promise<'copied' | 'skipped'> {
    const objectKey = this.objectKey(key, withdrawn);
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }),
      );
      if (head.ContentLength === size) return 'skipped';
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    await this.upload(objectKey, await open(), contentType);
    return 'copied';
  }
}
