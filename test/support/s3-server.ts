import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** s3rver's fixed credentials (it accepts only these). */
export const S3_ACCESS_KEY = 'S3RVER';

export interface TestS3Server {
  endpoint: string;
  client: S3Client;
  /** Creates a bucket with a fresh name; answers its name. */
  createBucket(prefix?: string): Promise<string>;
  /** The MEDIA_STORAGE=s3 settings of `bucket` on this server. */
  env(bucket: string): Record<string, string>;
  /** Every object key of `bucket`, sorted. */
  keys(bucket: string, prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * An S3-compatible server on loopback (s3rver, objects in a temporary directory); the app talks to it with the real
 * AWS SDK v3 (path-style addressing, s3rver's fixed access key).
 */
export async function startS3Server(): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'bookcase-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_ACCESS_KEY },
  });
  return {
    endpoint,
    client,
    async createBucket(prefix = 'media') {
      const bucket = `${prefix}-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      return bucket;
    },
    env: (bucket) => ({
      MEDIA_STORAGE: 's3',
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: S3_ACCESS_KEY,
      S3_SECRET_ACCESS_KEY: S3_ACCESS_KEY,
    }),
    async keys(bucket, prefix = '') {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The media suites run a second time with TEST_MEDIA_STORAGE=s3 (scripts/test.mjs): every app on s3rver. */
export const testMediaOnS3 = process.env.TEST_MEDIA_STORAGE === 's3';
