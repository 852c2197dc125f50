/** Where uploaded media lives. Keys are relative paths such as `libraries/ab/abcd.jpg`. */
export abstract class MediaStorage {
  abstract put(key: string, data: Buffer, contentType: string): Promise<void>;
  abstract delete(key: string): Promise<void>;
  abstract exists(key: string): Promise<boolean>;
  abstract read(key: string): Promise<Buffer>;

  /** The site-relative URL clients use, `""` for no media. */
  url(key: string | null | undefined): string {
    return key ? `/media/${key}` : '';
  }
}

const SAFE_KEY = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_.-]*)*$/i;

export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`unsafe media key: ${key}`);
}
