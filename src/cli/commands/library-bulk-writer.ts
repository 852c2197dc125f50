import type { Sql, Transaction } from '../../database/database.js';
import { baseSlug, slugCandidate } from '../../libraries/slug.js';
import type {
  LibraryStatus,
  SubmissionOrigin,
  Wheelchair,
} from '../../libraries/library.entity.js';

/** One library as the bulk commands (import, seed) write it. Provenance is set by the caller, never inferred. */
export interface BulkLibrary {
  name: string;
  description: string;
  address: string;
  city: string;
  country: string;
  postalCode: string;
  wheelchairAccessible: Wheelchair;
  capacity: number | null;
  isIndoor: boolean | null;
  isLit: boolean | null;
  website: string;
  operator: string;
  brand: string;
  source: string;
  externalId: string;
  lat: number;
  lng: number;
  status: LibraryStatus;
  submissionOrigin: Extract<SubmissionOrigin, 'import' | 'legacy'>;
  photoKey: string | null;
  thumbnailKey: string | null;
  createdAt: Date;
}

/** A library near an imported point: what the import compares to tell the same bookcase. */
export interface NearbyLibrary {
  name: string;
  address: string;
  lat: number;
  lng: number;
}

interface Pending {
  library: BulkLibrary;
  base: string;
  attempt: number;
}

/** How many candidate slugs past the last known one are probed at once for a base that is taken. */
const PROBE_WINDOW = 32;
const MAX_ROUNDS = 50;

/**
 * Multi-row inserts (`INSERT … SELECT FROM unnest(…)`) with unique slugs per decisions.md (`base`, `base-2`, …).
 * Slugs are planned in memory for the whole run; a slug that turns out to be taken (existing rows, a concurrent
 * writer) makes its row a no-op under `ON CONFLICT (slug) DO NOTHING`, and only those rows are retried with free
 * candidates found by probing the unique index. Bulk rows never carry the map-database permission: it is written
 * as false/null explicitly, and created_by stays null. The import's reads before it writes (its lock, the external
 * ids already present, the libraries near a point) are here too: the bulk commands' SQL in one place.
 */
export class LibraryBulkWriter {
  /** The next suffix to try per base slug in this run. */
  private readonly nextAttempt = new Map<string, number>();

  async insert(tx: Transaction, libraries: BulkLibrary[]): Promise<number> {
    let pending: Pending[] = libraries.map((library) => {
      const base = baseSlug({ city: library.city, address: library.address, name: library.name });
      return { library, base, attempt: this.take(base) };
    });
    let inserted = 0;
    for (let round = 0; pending.length > 0; round += 1) {
      if (round === MAX_ROUNDS)
        throw new Error('could not find free slugs (too many concurrent writers?)');
      const taken = await this.insertRows(tx, pending);
      inserted += pending.length - taken.length;
      if (taken.length > 0) await this.reassign(tx, taken);
      pending = taken;
    }
    return inserted;
  }

  /** The id the next inserted library gets (unless another writer takes it first). */
  async nextId(sql: Sql): Promise<number> {
    const [row] = await sql.query<{ next: string }[]>(
      'SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS next FROM libraries_id_seq',
    );
    return Number(row.next);
  }

  /** One import at a time (until the transaction ends), so two runs cannot both miss each other's external ids. */
  async lockImports(tx: Transaction): Promise<void> {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('bookcase:import-geojson'))");
  }

  /** The external ids among `ids` that libraries already carry. */
  async presentExternalIds(tx: Transaction, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await tx.query<{ external_id: string }[]>(
      "SELECT DISTINCT external_id FROM libraries WHERE external_id <> '' AND external_id = ANY($1::text[])",
      [ids],
    );
    return new Set(rows.map((row) => row.external_id));
  }

  /**
   * The libraries within `metres` of each point (one query, read through the location index), as
   * `point index → nearby libraries`.
   */
  async librariesNear(
    tx: Transaction,
    points: { index: number; lat: number; lng: number }[],
    metres: number,
  ): Promise<Map<number, NearbyLibrary[]>> {
    const nearby = new Map<number, NearbyLibrary[]>();
    if (!points.length) return nearby;
    const rows = await tx.query<(NearbyLibrary & { idx: number })[]>(
      `SELECT c.idx, l.name, l.address, ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lng
         FROM unnest($1::int[], $2::float8[], $3::float8[]) AS c(idx, lng, lat)
         JOIN libraries l
           ON ST_DWithin(l.location, ST_SetSRID(ST_MakePoint(c.lng, c.lat), 4326)::geography, $4)`,
      [points.map((p) => p.index), points.map((p) => p.lng), points.map((p) => p.lat), metres],
    );
    for (const row of rows) nearby.set(row.idx, [...(nearby.get(row.idx) ?? []), row]);
    return nearby;
  }

  private take(base: string): number {
    const attempt = this.nextAttempt.get(base) ?? 1;
    this.nextAttempt.set(base, attempt + 1);
    return attempt;
  }

  /** Gives every row whose slug was taken a candidate that is free right now (the insert re-checks it). */
  private async reassign(tx: Transaction, rows: Pending[]): Promise<void> {
    const bases = [...new Set(rows.map((row) => row.base))];
    const probes = bases.flatMap((base) => {
      const from = this.nextAttempt.get(base) ?? 1;
      const needed = rows.filter((row) => row.base === base).length + PROBE_WINDOW;
      return Array.from({ length: needed }, (_, i) => slugCandidate(base, from + i));
    });
    const existing = await tx.query<{ slug: string }[]>(
      'SELECT slug FROM libraries WHERE slug = ANY($1::text[])',
      [probes],
    );
    const used = new Set(existing.map((row) => row.slug));
    for (const row of rows) {
      let attempt = this.take(row.base);
      while (used.has(slugCandidate(row.base, attempt))) attempt = this.take(row.base);
      row.attempt = attempt;
    }
  }

  /** Inserts the rows; returns those whose slug was already taken (nothing was written for them). */
  private async insertRows(tx: Transaction, rows: Pending[]): Promise<Pending[]> {
    const column = <T>(pick: (library: BulkLibrary) => T) => rows.map((row) => pick(row.library));
    const slugs = rows.map((row) => slugCandidate(row.base, row.attempt));
    const result = await tx.query<{ slug: string }[]>(
      `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, wheelchair_accessible,
                              capacity, is_indoor, is_lit, website, operator, brand, source, external_id, location,
                              status, submission_origin, photo_key, thumbnail_key, created_at, updated_at,
                              mapdb_submission_allowed, mapdb_submission_allowed_at, created_by)
       SELECT slug, name, description, address, city, country, postal_code, wheelchair, capacity, is_indoor, is_lit,
              website, operator, brand, source, external_id,
              ST_SetSRID(ST_MakePoint(lng, lat), 4326)::geography,
              status, origin, photo_key, thumbnail_key, created_at, created_at,
              false, NULL, NULL
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::text[], $9::int[], $10::boolean[], $11::boolean[], $12::text[], $13::text[], $14::text[],
                     $15::text[], $16::text[], $17::float8[], $18::float8[], $19::text[], $20::text[], $21::text[],
                     $22::text[], $23::timestamptz[])
           AS u(slug, name, description, address, city, country, postal_code, wheelchair, capacity, is_indoor,
                is_lit, website, operator, brand, source, external_id, lng, lat, status, origin, photo_key,
                thumbnail_key, created_at)
       ON CONFLICT (slug) DO NOTHING
       RETURNING slug`,
      [
        slugs,
        column((l) => l.name),
        column((l) => l.description),
        column((l) => l.address),
        column((l) => l.city),
        column((l) => l.country),
        column((l) => l.postalCode),
        column((l) => l.wheelchairAccessible),
        column((l) => l.capacity),
        column((l) => l.isIndoor),
        column((l) => l.isLit),
        column((l) => l.website),
        column((l) => l.operator),
        column((l) => l.brand),
        column((l) => l.source),
        column((l) => l.externalId),
        column((l) => l.lng),
        column((l) => l.lat),
        column((l) => l.status),
        column((l) => l.submissionOrigin),
        column((l) => l.photoKey),
        column((l) => l.thumbnailKey),
        column((l) => l.createdAt),
      ],
    );
    const written = new Set(result.map((row) => row.slug));
    return rows.filter((_, i) => !written.has(slugs[i]));
  }
}
