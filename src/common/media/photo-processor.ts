import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Injectable } from '@nestjs/common';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import sharp, { type SharpOptions } from 'sharp';

export const ACCEPTED_PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const INVALID_PHOTO_MESSAGE = 'Upload a valid image in JPEG, PNG, or WEBP format.';

/** Decoding stops beyond this many pixels (a 100-megapixel "bomb" is refused, a 48 MP phone photo is fine). */
export const MAX_INPUT_PIXELS = 50_000_000;
export const MAIN_MAX_EDGE = 1600;
export const THUMBNAIL_WIDTH = 400;

/**
 * At most this many photos are decoded at a time (one per CPU). Further uploads wait their turn instead of all
 * competing for the cores, each holding a decoded image in memory: throughput stays the same, memory and the
 * latency tail do not grow with the number of concurrent uploads (issue 7's benchmark).
 */
export const MAX_CONCURRENT_PHOTOS = Math.max(1, availableParallelism());

// libvips' operation cache only pays off when the same image is processed again, which uploads never are; it
// would keep up to 50 MB of decoded pixels alive.
sharp.cache(false);

/** A counting semaphore: `run` starts the work when one of `size` slots is free, first come, first served. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active < this.size) this.active += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

/** Shared by every PhotoProcessor instance: submissions, community photos and reports use the same cores. */
const decoding = new Semaphore(MAX_CONCURRENT_PHOTOS);

export class InvalidPhotoError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidPhotoError';
  }
}

export interface ProcessedPhoto {
  main: Buffer;
  thumbnail: Buffer;
  width: number;
  height: number;
}

/**
 * The one photo pipeline (submissions, community photos, reports): the format is detected from the bytes (never
 * the name or the declared type), decoding is bounded, orientation is applied, every bit of metadata (EXIF, GPS,
 * XMP, ICC) is dropped, and the result is re-encoded as JPEG: main ≤ 1600 px on its long edge, thumbnail 400 px wide.
 */
@Injectable()
export class PhotoProcessor {
  /** `input` is the upload's bytes or the path of the temporary file holding them (read, never moved or removed). */
  async process(input: Buffer | string): Promise<ProcessedPhoto> {
    const detected = await (
      typeof input === 'string' ? fileTypeFromFile(input) : fileTypeFromBuffer(input)
    ).catch(() => undefined);
    if (!detected || !(ACCEPTED_PHOTO_TYPES as readonly string[]).includes(detected.mime)) {
      throw new InvalidPhotoError(`not an accepted image (${detected?.mime ?? 'unknown'})`);
    }
    const options: SharpOptions = {
      limitInputPixels: MAX_INPUT_PIXELS,
      failOn: 'error',
      sequentialRead: true,
    };
    try {
      return await decoding.run(async () => {
        const metadata = await sharp(input, options).metadata();
        if (!metadata.width || !metadata.height)
          throw new InvalidPhotoError('image has no dimensions');
        if (metadata.width * metadata.height > MAX_INPUT_PIXELS)
          throw new InvalidPhotoError('image has too many pixels');
        // The upload is decoded once (JPEG shrink-on-load where the size allows). The thumbnail is made from the
        // main image, already oriented, flattened and at most 1600 px: far cheaper than decoding the upload again.
        const { data: main, info } = await sharp(input, options)
          .rotate()
          .flatten({ background: '#ffffff' })
          .resize({
            width: MAIN_MAX_EDGE,
            height: MAIN_MAX_EDGE,
            fit: 'inside',
            withoutEnlargement: true,
          })
          .jpeg({ quality: 85 })
          .toBuffer({ resolveWithObject: true });
        const thumbnail = await sharp(main, options)
          .resize({ width: THUMBNAIL_WIDTH, withoutEnlargement: true })
          .jpeg({ quality: 80 })
          .toBuffer();
        return { main, thumbnail, width: info.width, height: info.height };
      });
    } catch (error) {
      if (error instanceof InvalidPhotoError) throw error;
      throw new InvalidPhotoError(`cannot decode image: ${(error as Error).message}`);
    }
  }
}

/** Where each kind of photo is stored: library photos (and staged edits), community photos, report photos. */
export const PHOTO_FOLDERS = ['libraries', 'photos', 'reports'] as const;
export type PhotoFolder = (typeof PHOTO_FOLDERS)[number];

/** Storage keys for one processed photo: `<folder>/<2 hex>/<uuid>.jpg` and its `_thumb.jpg`. */
export function photoKeys(folder: PhotoFolder): { main: string; thumbnail: string } {
  const id = randomUUID();
  const base = `${folder}/${id.slice(0, 2)}/${id}`;
  return { main: `${base}.jpg`, thumbnail: `${base}_thumb.jpg` };
}
