/** Small pieces both map clients share: bounded body reads, Retry-After, base URLs, argument checks. */

export class ResponseTooLargeError extends Error {
  constructor() {
    super('response body over the size limit');
    this.name = 'ResponseTooLargeError';
  }
}

/** Reads the whole body, giving up (and cancelling the stream) past `maxBytes`. */
export async function readBodyLimited(response: Response, maxBytes: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  // The DOM's `ReadableStreamReader` type gives chunks as `any`; fetch's body chunks are bytes.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Strict UTF-8 decoding; null for invalid byte sequences. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Throws the body away without waiting for it, so the connection is not left half-read. */
export function discardBody(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

/**
 * `Retry-After` in milliseconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). Null when absent or
 * unreadable.
 */
export function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (!/[a-z]/i.test(trimmed) || Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** `base` without trailing slashes, joined to an absolute `path`. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

export function isLatitude(value: number): boolean {
  return Number.isFinite(value) && value >= -90 && value <= 90;
}

export function isLongitude(value: number): boolean {
  return Number.isFinite(value) && value >= -180 && value <= 180;
}

export function isPositiveId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export const realSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
