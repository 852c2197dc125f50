import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import { Clock } from '../../common/clock.js';
import { MediaStorage } from '../../common/media/media-storage.js';
import { Database } from '../../database/database.js';
import type { LibraryStatus, Wheelchair } from '../../libraries/library.entity.js';
import { UsageError, type CliCommand } from '../cli-command.js';
import { LibraryBulkWriter, type BulkLibrary } from './library-bulk-writer.js';
import {
  DESCRIPTION_SENTENCES,
  NAME_TEMPLATES,
  OPERATORS,
  PLACES,
  SEED_CITIES,
  seededRandom,
  type SeedCity,
} from './seed-data.js';

/**
 * Rows per insert at most: the ids of one chunk of the search bitmaps (library_search_bitmaps, library_search_tokens,
 * library_country_bitmaps: a row per key and per 8,192 ids). Each insert ends on a chunk's last id, so the triggers
 * write each bitmap row once rather than rewrite it from every batch that shares its chunk: with batches of 5,000 a
 * row was rewritten about twice, and the dead copies made library_search_bitmaps 2.4 times its size at 1M.
 */
const CHUNK_IDS = 8192;
const MAX_LIBRARIES = 5_000_000;
const RADIUS_KM = 15;
const SPAN_MS = 3 * 365 * 24 * 3600 * 1000;
const PHOTO_COLOURS = ['#8b3a3a', '#2f5d50', '#c8a951', '#3b5b92', '#6d4c7d', '#d17a22'];
const WHEELCHAIR: Wheelchair[] = ['', '', 'yes', 'no', 'limited'];

export interface SeedOptions {
  libraries: number;
  pendingShare: number;
  withPhotos: boolean;
  /** The PRNG seed: the same value gives the same rows. */
  randomSeed?: number;
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)];
const int = (random: Random, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));

function postcode(random: Random, pattern: string): string {
  return pattern.replace(/[#@]/g, (slot) =>
    slot === '#' ? String(int(random, 0, 9)) : String.fromCharCode(65 + int(random, 0, 25)),
  );
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? '');
}

/** Cumulative weights, so a city is drawn in proportion to its weight. */
function cityPicker(random: Random): () => SeedCity {
  const total = SEED_CITIES.reduce((sum, c) => sum + c.weight, 0);
  const bounds: number[] = [];
  let running = 0;
  for (const c of SEED_CITIES) bounds.push((running += c.weight / total));
  return () => {
    const r = random();
    const index = bounds.findIndex((bound) => r < bound);
    return SEED_CITIES[index === -1 ? SEED_CITIES.length - 1 : index];
  };
}

/** One plausible library somewhere within ~15 km of a city centre (denser towards the centre). */
function makeLibrary(
  random: Random,
  place: SeedCity,
  now: number,
  pendingShare: number,
  photos: { main: string; thumbnail: string }[],
): BulkLibrary {
  const language = place.language;
  const street = pick(random, place.streets);
  const number = String(int(random, 1, 199));
  const address =
    language === 'de' || !['US', 'GB', 'IE', 'CA', 'AU', 'NZ'].includes(place.country)
      ? `${street} ${number}`
      : `${number} ${street}`;
  const values = { street, city: place.name, place: pick(random, PLACES[language]) };
  const name = fill(pick(random, NAME_TEMPLATES[language]), values);

  const sentences = [...DESCRIPTION_SENTENCES[language]];
  const description: string[] = [];
  for (let count = int(random, 2, 3); description.length < count;) {
    description.push(
      fill(sentences.splice(Math.floor(random() * sentences.length), 1)[0], {
        n: String(int(random, 2, 6)),
      }),
    );
  }

  const distanceKm = RADIUS_KM * random();
  const bearing = random() * 2 * Math.PI;
  const lat = place.lat + (distanceKm * Math.cos(bearing)) / 111.32;
  const lng =
    place.lng + (distanceKm * Math.sin(bearing)) / (111.32 * Math.cos((place.lat * Math.PI) / 180));

  const origin = random() < 0.7 ? 'import' : 'legacy';
  const status: LibraryStatus = random() < pendingShare ? 'pending' : 'approved';
  const photo = photos.length && random() < 0.8 ? pick(random, photos) : null;
  const tristate = () => (random() < 0.4 ? null : random() < 0.5);
  const littleFree = name.startsWith('Little Free Library');
  const age = SPAN_MS * random() * random();

  return {
    name,
    description: description.join(' '),
    address,
    city: place.name,
    country: place.country,
    postalCode: postcode(random, place.postcode),
    wheelchairAccessible: pick(random, WHEELCHAIR),
    capacity: random() < 0.5 ? null : int(random, 10, 300),
    isIndoor: tristate(),
    isLit: tristate(),
    website: littleFree ? 'https://littlefreelibrary.org/' : '',
    operator: random() < 0.4 ? fill(pick(random, OPERATORS[language]), values) : '',
    brand: littleFree ? 'Little Free Library' : '',
    source: origin === 'import' ? 'seed' : '',
    externalId: '',
    lat: Math.max(-90, Math.min(90, lat)),
    lng: ((((lng + 180) % 360) + 360) % 360) - 180,
    status,
    submissionOrigin: origin,
    photoKey: photo?.main ?? null,
    thumbnailKey: photo?.thumbnail ?? null,
    createdAt: new Date(now - age),
  };
}

/** A handful of small JPEGs (main and thumbnail), stored once and shared by many rows. */
async function seedPhotos(media: MediaStorage): Promise<{ main: string; thumbnail: string }[]> {
  const photos: { main: string; thumbnail: string }[] = [];
  for (const [index, colour] of PHOTO_COLOURS.entries()) {
    const image = (width: number, height: number) =>
      sharp({ create: { width, height, channels: 3, background: colour } })
        .composite([
          {
            input: Buffer.from(
              `<svg width="${width}" height="${height}"><rect x="${width * 0.3}" y="${height * 0.15}" width="${width * 0.4}" height="${height * 0.7}" fill="#f4ecd8" stroke="#3a2a1a" stroke-width="${width / 100}"/></svg>`,
            ),
          },
        ])
        .jpeg({ quality: 80 })
        .toBuffer();
    const keys = {
      main: `libraries/seed/seed-${index + 1}.jpg`,
      thumbnail: `libraries/seed/seed-${index + 1}_thumb.jpg`,
    };
    await media.put(keys.main, await image(800, 600), 'image/jpeg');
    await media.put(keys.thumbnail, await image(400, 300), 'image/jpeg');
    photos.push(keys);
  }
  return photos;
}

/** Writes `libraries` realistic rows in batches of multi-row inserts, then refreshes the planner's statistics. */
export async function seedLibraries(
  app: INestApplicationContext,
  options: SeedOptions,
): Promise<number> {
  const database = app.get(Database);
  const now = app.get(Clock).now();
  const random = seededRandom(options.randomSeed ?? 20_260_615);
  const nextCity = cityPicker(random);
  const photos = options.withPhotos ? await seedPhotos(app.get(MediaStorage)) : [];
  const writer = new LibraryBulkWriter();
  let written = 0;
  for (let start = 0; start < options.libraries;) {
    const nextId = await writer.nextId(database);
    const size = Math.min(CHUNK_IDS - (nextId % CHUNK_IDS), options.libraries - start);
    const rows = Array.from({ length: size }, () =>
      makeLibrary(random, nextCity(), now, options.pendingShare, photos),
    );
    written += await database.transaction((tx) => writer.insert(tx, rows));
    start += size;
  }
  await database.query('ANALYZE libraries');
  return written;
}

export const seedCommand: CliCommand = {
  usage:
    'seed --libraries N [--pending-share 0.1] [--with-photos]   realistic libraries for benchmarks',
  options: {
    libraries: { type: 'string' },
    'pending-share': { type: 'string' },
    'with-photos': { type: 'boolean' },
  },
  async run(app, values) {
    const libraries = Number(values.libraries);
    if (!Number.isInteger(libraries) || libraries < 1 || libraries > MAX_LIBRARIES) {
      throw new UsageError(`--libraries must be a whole number from 1 to ${MAX_LIBRARIES}`);
    }
    const pendingShare =
      values['pending-share'] === undefined ? 0.1 : Number(values['pending-share']);
    if (!Number.isFinite(pendingShare) || pendingShare < 0 || pendingShare > 1) {
      throw new UsageError('--pending-share must be a number from 0 to 1');
    }
    const started = performance.now();
    const written = await seedLibraries(app, {
      libraries,
      pendingShare,
      withPhotos: values['with-photos'] === true,
    });
    return `Seeded ${written} libraries in ${((performance.now() - started) / 1000).toFixed(1)} s`;
  },
};
