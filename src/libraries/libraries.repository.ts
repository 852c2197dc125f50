import { Injectable } from '@nestjs/common';
import { Database, type Transaction } from '../database/database.js';
import { PreparedReader } from '../database/prepared-reader.js';
import type { LibraryStatus, PendingPhoto, SubmissionOrigin } from './library.entity.js';
import type { CommunityPhotoRow, LibraryRow, LibraryValues } from './library.row.js';
import {
  addListConditions,
  favouritedColumn,
  LIBRARY_COLUMNS,
  likeEscape,
  Sql,
  type LibrarySearch,
} from './list-query.js';
import { slugCandidate } from './slug.js';

// The list's SQL building lives in list-query.ts; these names stay importable from here for the map's readers.
export {
  APPROVED_POINT,
  HAS_PHOTO,
  LIBRARY_COLUMNS,
  likeEscape,
  Sql,
  type LibrarySearch,
} from './list-query.js';

export interface NewLibrary extends LibraryValues {
  slugBase: string;
  status: LibraryStatus;
  origin: SubmissionOrigin;
  createdBy: number | null;
  source: string;
  externalId: string;
  mapdbSubmissionAllowed: boolean;
  mapdbSubmissionAllowedAt: Date | null;
  photoKey: string | null;
  thumbnailKey: string | null;
}

@Injectable()
export class LibrariesRepository {
  constructor(
    private readonly db: Database,
    private readonly reader: PreparedReader,
  ) {}

  /**
   * Adds the conditions of a public list without proximity (approved, q, search, city, country, postal_code,
   * has_photo) to `sql`: other readers of approved libraries (the map) filter exactly as the list does.
   */
  addApprovedFilters(sql: Sql, search: Omit<LibrarySearch, 'near'>): void {
    addListConditions(sql, search, 'count');
  }

  /** A read with an optionally prepared statement, for the map's readers (see PreparedReader). */
  read<T>(text: string, params: unknown[], prepared: boolean): Promise<T[]> {
    return this.reader.read<T>(text, params, prepared);
  }

  /**
   * A library by slug. Outside a transaction the statement is prepared: planning it (a table with 19 indexes) cost
   * PostgreSQL more than running it (0.20 → 0.05 CPU-ms per detail page at 1M libraries, issue 22).
   */
  async findBySlug(
    slug: string,
    userId: number | null,
    tx?: Transaction,
    lock = false,
  ): Promise<LibraryRow | null> {
    const sql = new Sql();
    const favourited = favouritedColumn(sql, userId);
    const text = `SELECT ${LIBRARY_COLUMNS}, ${favourited} FROM libraries l WHERE l.slug = ${sql.param(slug)} ${lock ? 'FOR UPDATE OF l' : ''}`;
    const rows = tx
      ? await tx.query<LibraryRow[]>(text, sql.params)
      : await this.reader.read<LibraryRow>(text, sql.params);
    return rows[0] ?? null;
  }

  async findById(id: number, userId: number | null, tx?: Transaction): Promise<LibraryRow | null> {
    const sql = new Sql();
    const favourited = favouritedColumn(sql, userId);
    const rows = await (tx ?? this.db).query<LibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS}, ${favourited} FROM libraries l WHERE l.id = ${sql.param(id)}`,
      sql.params,
    );
    return rows[0] ?? null;
  }

  findApprovedPhotos(libraryId: number): Promise<CommunityPhotoRow[]> {
    return this.reader.read<CommunityPhotoRow>(
      `SELECT id, caption, photo_key, thumbnail_key, created_at FROM library_photos
       WHERE library_id = $1 AND status = 'approved' ORDER BY created_at DESC, id DESC`,
      [libraryId],
    );
  }

  async countByCreator(userId: number): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM libraries WHERE created_by = $1',
      [userId],
    );
    return rows[0].n;
  }

  /** The caller's submissions: pending first, then newest. */
  findByCreator(userId: number, limit: number, offset: number): Promise<LibraryRow[]> {
    return this.db.query<LibraryRow[]>(
      `SELECT ${LIBRARY_COLUMNS},
         EXISTS (SELECT 1 FROM favourites f WHERE f.user_id = $1 AND f.library_id = l.id) AS is_favourited
       FROM libraries l WHERE l.created_by = $1
       ORDER BY (l.status = 'pending') DESC, l.created_at DESC, l.id DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    );
  }

  /**
   * Inserts with the first free slug of `slugBase`, `slugBase-2`, …; concurrent creates never collide because a
   * taken slug makes the insert a no-op (ON CONFLICT DO NOTHING) and the next candidate is tried.
   */
  async insert(tx: Transaction, library: NewLibrary): Promise<number> {
    // Slug bases are [a-z0-9-] only; the pattern index (varchar_pattern_ops) serves the prefix lookup.
    const taken = await tx.query<{ slug: string }[]>(
      'SELECT slug FROM libraries WHERE slug = $1 OR slug LIKE $2',
      [library.slugBase, `${likeEscape(library.slugBase)}-%`],
    );
    const used = new Set(taken.map((row) => row.slug));
    let attempt = 1;
    for (let tries = 0; tries < 50; tries += 1) {
      while (used.has(slugCandidate(library.slugBase, attempt))) attempt += 1;
      const slug = slugCandidate(library.slugBase, attempt);
      const rows = await tx.query<{ id: number }[]>(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, wheelchair_accessible,
           capacity, is_indoor, is_lit, website, contact, operator, brand, source, external_id, photo_key, thumbnail_key,
           location, status, submission_origin, created_by, mapdb_submission_allowed, mapdb_submission_allowed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
           ST_SetSRID(ST_MakePoint($20, $21), 4326)::geography, $22, $23, $24, $25, $26)
         ON CONFLICT (slug) DO NOTHING RETURNING id`,
        [
          slug,
          library.name,
          library.description,
          library.address,
          library.city,
          library.country,
          library.postal_code,
          library.wheelchair_accessible,
          library.capacity,
          library.is_indoor,
          library.is_lit,
          library.website,
          library.contact,
          library.operator,
          library.brand,
          library.source,
          library.externalId,
          library.photoKey,
          library.thumbnailKey,
          library.longitude,
          library.latitude,
          library.status,
          library.origin,
          library.createdBy,
          library.mapdbSubmissionAllowed,
          library.mapdbSubmissionAllowedAt,
        ],
      );
      if (rows.length) return rows[0].id;
      used.add(slug);
    }
    throw new Error(`no free slug for ${library.slugBase}`);
  }

  /** Applies edited columns in place (pending libraries). Keys are LibraryValues names. */
  async updateValues(
    tx: Transaction,
    id: number,
    values: Partial<LibraryValues>,
    photo: PendingPhoto | null,
    aiGeneratedFields: string[],
  ): Promise<void> {
    const sql = new Sql();
    const sets: string[] = [];
    for (const [key, value] of Object.entries(values)) {
      if (key === 'latitude' || key === 'longitude') continue;
      sets.push(`${key} = ${sql.param(value)}`);
    }
    if (values.latitude !== undefined && values.longitude !== undefined) {
      sets.push(
        `location = ST_SetSRID(ST_MakePoint(${sql.param(values.longitude)}, ${sql.param(values.latitude)}), 4326)::geography`,
      );
    }
    if (photo) {
      sets.push(
        `photo_key = ${sql.param(photo.photo_key)}`,
        `thumbnail_key = ${sql.param(photo.thumbnail_key)}`,
      );
    }
    sets.push(`ai_generated_fields = ${sql.param(aiGeneratedFields)}`, 'updated_at = now()');
    await tx.query(
      `UPDATE libraries SET ${sets.join(', ')} WHERE id = ${sql.param(id)}`,
      sql.params,
    );
  }

  async stageChanges(
    tx: Transaction,
    id: number,
    changes: Record<string, unknown> | null,
    photo: PendingPhoto | null,
  ): Promise<void> {
    await tx.query(
      'UPDATE libraries SET pending_changes = $1, pending_photo = $2, updated_at = now() WHERE id = $3',
      [
        changes === null ? null : JSON.stringify(changes),
        photo === null ? null : JSON.stringify(photo),
        id,
      ],
    );
  }

  /** Whether a stored file is (also) a community photo's, e.g. a primary photo promoted from one. */
  async isCommunityPhotoKey(photoKey: string): Promise<boolean> {
    const rows = await this.db.query<unknown[]>(
      'SELECT 1 FROM library_photos WHERE photo_key = $1 LIMIT 1',
      [photoKey],
    );
    return rows.length > 0;
  }

  /** A transaction whose lost COMMIT is told apart from a failure before it (see runTransaction). */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
