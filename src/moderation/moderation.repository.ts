import { Injectable } from '@nestjs/common';
import { Database, type Sql, type Transaction } from '../database/database.js';
import { LIBRARY_COLUMNS, likeEscape } from '../libraries/list-query.js';
import type { LibraryRow } from '../libraries/library.row.js';

/** Report and photo ids are `serial`: a larger integer names nothing (and would not fit the column). */
const MAX_SERIAL_ID = 2_147_483_647;
const isSerialId = (id: number): boolean => Number.isInteger(id) && id >= 1 && id <= MAX_SERIAL_ID;

/** TypeORM's postgres driver answers an UPDATE or DELETE as `[returned rows, affected count]`. */
type UpdateResult<T> = [T[], number];

interface PhotoKeys {
  photo_key: string;
  thumbnail_key: string;
}

export type ModerationLibraryRow = LibraryRow & { created_by_username: string | null };

interface RefColumns {
  library_id: number;
  library_slug: string;
  library_name: string;
  library_address: string;
  library_city: string;
  library_country: string;
  library_status: string;
  created_by: number | null;
  created_by_username: string | null;
}

export type ModerationReportRow = RefColumns & {
  id: number;
  reason: string;
  details: string;
  photo_key: string | null;
  status: string;
  created_at: Date;
};

export type ModerationPhotoRow = RefColumns & {
  id: number;
  caption: string;
  photo_key: string;
  thumbnail_key: string;
  status: string;
  created_at: Date;
};

const LIBRARY_SELECT = `SELECT ${LIBRARY_COLUMNS}, false AS is_favourited, u.username AS created_by_username
  FROM libraries l LEFT JOIN users u ON u.id = l.created_by`;

const REF_COLUMNS = `l.id AS library_id, l.slug AS library_slug, l.name AS library_name, l.address AS library_address,
  l.city AS library_city, l.country AS library_country, l.status AS library_status,
  x.created_by, u.username AS created_by_username`;

/** A report or community photo with the library it belongs to and its author. */
const REPORT_SELECT = `SELECT x.id, x.reason, x.details, x.photo_key, x.status, x.created_at, ${REF_COLUMNS}
  FROM reports x JOIN libraries l ON l.id = x.library_id LEFT JOIN users u ON u.id = x.created_by`;
const PHOTO_SELECT = `SELECT x.id, x.caption, x.photo_key, x.thumbnail_key, x.status, x.created_at, ${REF_COLUMNS}
  FROM library_photos x JOIN libraries l ON l.id = x.library_id LEFT JOIN users u ON u.id = x.created_by`;

export interface LibraryFilter {
  status: string;
  q?: string;
  country?: string;
  source?: string;
}

function libraryWhere(filter: LibraryFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  if (filter.status !== 'all') {
    params.push(filter.status);
    conditions.push(`l.status = $${params.length}`);
  }
  if (filter.q) {
    params.push(`%${likeEscape(filter.q.toLowerCase())}%`);
    const p = `$${params.length}`;
    conditions.push(
      `(lower(l.name) LIKE ${p} OR lower(l.address) LIKE ${p} OR lower(l.city) LIKE ${p})`,
    );
  }
  if (filter.country) {
    params.push(filter.country.toUpperCase());
    conditions.push(`l.country = $${params.length}`);
  }
  if (filter.source) {
    params.push(filter.source);
    conditions.push(`l.source = $${params.length}`);
  }
  return { where: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

function statusWhere(
  column: string,
  filters: Record<string, string>,
): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  for (const [name, value] of Object.entries(filters)) {
    if (value === 'all') continue;
    params.push(value);
    conditions.push(`${column}.${name} = $${params.length}`);
  }
  return { where: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/** A community photo whose status changed: who submitted it and its library, for the submitter's notice. */
export interface ChangedPhoto {
  library_id: number;
  previous: string;
  created_by: number | null;
  library_slug: string;
  library_name: string;
}

export interface ModerationSummaryRow {
  pending_libraries_count: number;
  open_reports_count: number;
  pending_photos_count: number;
  total_libraries: number;
  total_users: number;
}

@Injectable()
export class ModerationRepository {
  constructor(private readonly db: Database) {}

  async summary(): Promise<ModerationSummaryRow> {
    const rows = await this.db.query<ModerationSummaryRow[]>(
      `SELECT
         (SELECT count(*) FROM libraries WHERE status = 'pending')::int AS pending_libraries_count,
         (SELECT count(*) FROM reports WHERE status = 'open')::int AS open_reports_count,
         (SELECT count(*) FROM library_photos WHERE status = 'pending')::int AS pending_photos_count,
         (SELECT count(*) FROM libraries WHERE status = 'approved')::int AS total_libraries,
         (SELECT count(*) FROM users)::int AS total_users`,
    );
    return rows[0];
  }

  async countLibraries(filter: LibraryFilter): Promise<number> {
    const { where, params } = libraryWhere(filter);
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM libraries l ${where}`,
      params,
    );
    return rows[0].n;
  }

  findLibraries(
    filter: LibraryFilter,
    limit: number,
    offset: number,
  ): Promise<ModerationLibraryRow[]> {
    const { where, params } = libraryWhere(filter);
    return this.db.query(
      `${LIBRARY_SELECT} ${where} ORDER BY l.created_at DESC, l.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }

  async findLibrary(slug: string, tx?: Sql, lock = false): Promise<ModerationLibraryRow | null> {
    const rows = await (tx ?? this.db).query<ModerationLibraryRow[]>(
      `${LIBRARY_SELECT} WHERE l.slug = $1 ${lock ? 'FOR UPDATE OF l' : ''}`,
      [slug],
    );
    return rows[0] ?? null;
  }

  async setLibraryStatus(
    tx: Sql,
    id: number,
    status: string,
    rejectionReason: string,
  ): Promise<void> {
    await tx.query(
      'UPDATE libraries SET status = $1, rejection_reason = $2, updated_at = now() WHERE id = $3',
      [status, rejectionReason, id],
    );
  }

  async clearStaged(tx: Sql, id: number): Promise<void> {
    await tx.query(
      'UPDATE libraries SET pending_changes = NULL, pending_photo = NULL, updated_at = now() WHERE id = $1',
      [id],
    );
  }

  async countReports(filters: { status: string; reason: string }): Promise<number> {
    const { where, params } = statusWhere('x', filters);
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM reports x ${where}`,
      params,
    );
    return rows[0].n;
  }

  findReports(
    filters: { status: string; reason: string },
    limit: number,
    offset: number,
  ): Promise<ModerationReportRow[]> {
    const { where, params } = statusWhere('x', filters);
    return this.db.query(
      `${REPORT_SELECT}
       ${where} ORDER BY x.created_at DESC, x.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }

  async findReport(id: number): Promise<ModerationReportRow | null> {
    if (!isSerialId(id)) return null;
    const rows = await this.db.query<ModerationReportRow[]>(
      `${REPORT_SELECT}
       WHERE x.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Sets a report's status; the previous one and its library for the audit trail, null when there is no such report. */
  async setReportStatus(
    tx: Sql,
    id: number,
    status: string,
  ): Promise<{ previous: string; library_id: number } | null> {
    if (!isSerialId(id)) return null;
    const [rows] = await tx.query<UpdateResult<{ previous: string; library_id: number }>>(
      `UPDATE reports r SET status = $1, updated_at = now()
         FROM (SELECT id, status FROM reports WHERE id = $2 FOR UPDATE) old
        WHERE r.id = old.id
        RETURNING old.status AS previous, r.library_id`,
      [status, id],
    );
    return rows[0] ?? null;
  }

  async countPhotos(filters: { status: string }): Promise<number> {
    const { where, params } = statusWhere('x', filters);
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM library_photos x ${where}`,
      params,
    );
    return rows[0].n;
  }

  findPhotos(
    filters: { status: string },
    limit: number,
    offset: number,
  ): Promise<ModerationPhotoRow[]> {
    const { where, params } = statusWhere('x', filters);
    return this.db.query(
      `${PHOTO_SELECT}
       ${where} ORDER BY x.created_at DESC, x.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }

  async findPhoto(id: number): Promise<ModerationPhotoRow | null> {
    if (!isSerialId(id)) return null;
    const rows = await this.db.query<ModerationPhotoRow[]>(
      `${PHOTO_SELECT}
       WHERE x.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Sets a community photo's status (inside the caller's transaction, the photo row locked); answers its library,
   * files and previous status, null when there is no such photo. Its effect on the library's primary photo is the
   * service's rule (ModerationService.promotePhoto).
   */
  async setPhotoStatus(
    tx: Sql,
    id: number,
    status: string,
  ): Promise<(PhotoKeys & ChangedPhoto) | null> {
    if (!isSerialId(id)) return null;
    const [rows] = await tx.query<UpdateResult<PhotoKeys & ChangedPhoto>>(
      `UPDATE library_photos p SET status = $1, updated_at = now()
         FROM (SELECT id, status FROM library_photos WHERE id = $2 FOR UPDATE) old, libraries l
        WHERE p.id = old.id AND l.id = p.library_id
        RETURNING p.library_id, p.photo_key, p.thumbnail_key, old.status AS previous, p.created_by,
                  l.slug AS library_slug, l.name AS library_name`,
      [status, id],
    );
    return rows[0] ?? null;
  }

  /** The library's primary photo key, its row locked until the transaction ends (null: none; undefined: no row). */
  async lockPrimaryPhoto(tx: Sql, libraryId: number): Promise<string | null | undefined> {
    const rows = await tx.query<{ photo_key: string | null }[]>(
      'SELECT photo_key FROM libraries WHERE id = $1 FOR UPDATE',
      [libraryId],
    );
    return rows.length ? rows[0].photo_key : undefined;
  }

  /** The library's newest approved community photo (index library_photos_library_status_idx), null when none. */
  async newestApprovedPhoto(tx: Sql, libraryId: number): Promise<PhotoKeys | null> {
    const rows = await tx.query<PhotoKeys[]>(
      `SELECT photo_key, thumbnail_key FROM library_photos
        WHERE library_id = $1 AND status = 'approved'
        ORDER BY created_at DESC, id DESC LIMIT 1`,
      [libraryId],
    );
    return rows[0] ?? null;
  }

  /** Sets (or clears, with null) the library's primary photo. */
  async setPrimaryPhoto(tx: Sql, libraryId: number, photo: PhotoKeys | null): Promise<void> {
    await tx.query(
      `UPDATE libraries SET photo_key = $1, thumbnail_key = $2, updated_at = now() WHERE id = $3`,
      [photo?.photo_key ?? null, photo?.thumbnail_key ?? null, libraryId],
    );
  }

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
