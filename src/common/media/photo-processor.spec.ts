import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { InvalidPhotoError, PhotoProcessor, photoKeys } from './photo-processor.js';

/** A PNG whose header claims width × height pixels, with almost no pixel data behind it (a decompression bomb). */
function pngBomb(width: number, height: number): Buffer {
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

const solid = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: { r: 200, g: 30, b: 60, alpha: 0.5 } } });

describe('PhotoProcessor', () => {
  const processor = new PhotoProcessor();

  it('re-encodes a large JPEG as a ≤1600 px JPEG and a 400 px wide thumbnail', async () => {
    const input = await solid(4000, 3000).jpeg().toBuffer();
    const result = await processor.process(input);
    const main = await sharp(result.main).metadata();
    const thumb = await sharp(result.thumbnail).metadata();
    expect([main.format, main.width, main.height]).toEqual(['jpeg', 1600, 1200]);
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['jpeg', 400, 300]);
    expect([result.width, result.height]).toEqual([1600, 1200]);
  });

  it('strips EXIF (GPS included) and applies the orientation', async () => {
    const input = await solid(600, 300)
      .jpeg()
      .withExif({
        IFD0: { Make: 'TestCam' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '52/1 31/1 0/1' },
      })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const before = await sharp(input).metadata();
    expect(before.exif).toBeDefined();
    expect(before.orientation).toBe(6);
    const result = await processor.process(input);
    const after = await sharp(result.main).metadata();
    expect(after.exif).toBeUndefined();
    expect(after.orientation).toBeUndefined();
    expect([after.width, after.height]).toEqual([300, 600]);
    expect(result.main.includes(Buffer.from('TestCam'))).toBe(false);
  });

  it('accepts PNG (transparency flattened) and WEBP, and never enlarges small images', async () => {
    for (const input of [
      await solid(120, 80, 4).png().toBuffer(),
      await solid(120, 80).webp().toBuffer(),
    ]) {
      const result = await processor.process(input);
      const meta = await sharp(result.main).metadata();
      expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual([
        'jpeg',
        120,
        80,
        false,
      ]);
    }
  });

  it.each([
    ['text pretending to be a JPEG', Buffer.from('this is not an image at all, just text')],
    ['a GIF', Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')],
    ['a PDF', Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF')],
    ['an empty file', Buffer.alloc(0)],
  ])('refuses %s', async (_label, input) => {
    await expect(processor.process(input)).rejects.toBeInstanceOf(InvalidPhotoError);
  });

  it('refuses a truncated JPEG', async () => {
    const input = await solid(800, 600).jpeg().toBuffer();
    await expect(
      processor.process(input.subarray(0, Math.floor(input.length / 3))),
    ).rejects.toBeInstanceOf(InvalidPhotoError);
  });

  it('refuses a 100-megapixel PNG bomb without decoding it', async () => {
    const bomb = pngBomb(10_000, 10_000);
    expect(bomb.length).toBeLessThan(5_000);
    await expect(processor.process(bomb)).rejects.toBeInstanceOf(InvalidPhotoError);
  });

  it('names stored files by a random id under their folder', () => {
    const keys = photoKeys('libraries');
    expect(keys.main).toMatch(/^libraries\/[0-9a-f]{2}\/[0-9a-f-]{36}\.jpg$/);
    expect(keys.thumbnail).toBe(keys.main.replace('.jpg', '_thumb.jpg'));
    expect(photoKeys('libraries').main).not.toBe(keys.main);
  });
});
