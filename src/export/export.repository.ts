import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../database/database.js';
import type { PublicLibraryColumns } from '../libraries/library.mapper.js';
import type { LibraryRow } from '../libraries/library.row.js';

/** The columns of an approved library the export reads: the public ones and nothing else. */
export type ExportLibraryRow = PublicLibraryColumns &
  Pick<LibraryRow, 'lat' | 'lng' | 'external_id'> & { updated_at: Date };

export interface ExportFileStats {
  bytes: number;
  sha256: string;
}

export interface ExportVersionRow {
  id: number;
  status: 'building' | 'published';
  file_stem: string;
  generated_at: Date;
  record_count: number;
  geojson_key: string;
  geojson_bytes: number;
  geojson_sha256: string | null;
  gz_key: string;
  gz_bytes: number;
  gz_sha256: string | null;
  metadata_key: string;
  metadata_bytes: number;
  metadata_sha256: string | null;
}

export interface NewExportVersion {
  fileStem: string;
  generatedAt: Date;
  geojsonKey: string;
  gzKey: string;
  metadataKey: string;
}

export interface PublishedFiles {
  recordCount: number;
  geojson: ExportFileStats;
  gz: ExportFileStats;
  metadata: ExportFileStats;
}

const VERSION_COLUMNS = `id, status, file_stem, generated_at, record_count, geojson_key,
  geojson_bytes::float8 AS geojson_bytes, geojson_sha256, gz_key, gz_bytes::float8 AS gz_bytes, gz_sha256,
  metadata_key, metadata_bytes::float8 AS metadata_bytes, metadata_sha256`;

/** Every query of the open-data export: the approved libraries it reads and the versions it records. */
@Injectable()
export class ExportRepository {
  constructor(private readonly db: Database) {}

  /**
   * Runs `work` in a read-only REPEATABLE READ transaction, so every batch it reads sees one snapshot: a library
   * approved or edited mid-export is either wholly in this version or wholly in the next. Without `snapshot` (the
   * embedded database, whose single connection must not be held for a whole export) each query stands alone.
   */
  inSnapshot<T>(snapshot: boolean, work: (sql: Sql) => Promise<T>): Promise<T> {
    if (!snapshot) return work(this.db);
    return this.db.transaction(work, { isolation: 'REPEATABLE READ', readOnly: true });
  }

  async countApproved(sql: Sql): Promise<number> {
    const rows = await sql.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM libraries WHERE status = 'approved'`,
    );
    return rows[0].count;
  }

  /** The next `limit` approved libraries after `afterId`, in id order (keyset reads on libraries_approved_id_idx). */
  approvedAfter(sql: Sql, afterId: number, limit: number): Promise<ExportLibraryRow[]> {
    return sql.query<ExportLibraryRow[]>(
      `SELECT id, slug, name, description, photo_key, thumbnail_key,
              ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lng,
              address, city, country, postal_code, wheelchair_accessible, capacity, is_indoor, is_lit,
              website, contact, source, operator, brand, external_id, created_at, updated_at
         FROM libraries
        WHERE status = 'approved' AND id > $1
        ORDER BY id
        LIMIT $2`,
      [afterId, limit],
    );
  }

  async latestPublished(): Promise<ExportVersionRow | null> {
    const rows = await this.db.query<ExportVersionRow[]>(
      `SELECT ${VERSION_COLUMNS} FROM export_versions
        WHERE status = 'published' ORDER BY generated_at DESC, id DESC LIMIT 1`,
    );
    return rows[0] ?? null;
  }

  /** Published versions past the newest `keep`, oldest last. */
  publishedBeyond(keep: number): Promise<ExportVersionRow[]> {
    return this.db.query<ExportVersionRow[]>(
      `SELECT ${VERSION_COLUMNS} FROM export_versions
        WHERE status = 'published' ORDER BY generated_at DESC, id DESC OFFSET $1`,
      [keep],
    );
  }

  /** Runs left `building` by a process that died (only the lease holder builds, so none is live). */
  building(): Promise<ExportVersionRow[]> {
    return this.db.query<ExportVersionRow[]>(
      `SELECT ${VERSION_COLUMNS} FROM export_versions WHERE status = 'building' ORDER BY id`,
    );
  }

  /**
   * Records a run before it writes any file, so a crash leaves a row that names what to clean up. Null when a
   * version (of any status) already has that file stem: the caller picks another.
   */
  async insertBuilding(version: NewExportVersion): Promise<number | null> {
    const rows = await this.db.query<{ id: number }[]>(
      `INSERT INTO export_versions (status, file_stem, generated_at, geojson_key, gz_key, metadata_key)
       VALUES ('building', $1, $2, $3, $4, $5)
       ON CONFLICT (file_stem) DO NOTHING RETURNING id`,
      [
        version.fileStem,
        version.generatedAt,
        version.geojsonKey,
        version.gzKey,
        version.metadataKey,
      ],
    );
    return rows[0]?.id ?? null;
  }

  async publish(id: number, files: PublishedFiles): Promise<void> {
    await this.db.query(
      `UPDATE export_versions
          SET status = 'published', record_count = $2,
              geojson_bytes = $3, geojson_sha256 = $4, gz_bytes = $5, gz_sha256 = $6,
              metadata_bytes = $7, metadata_sha256 = $8
        WHERE id = $1 AND status = 'building'`,
      [
        id,
        files.recordCount,
        files.geojson.bytes,
        files.geojson.sha256,
        files.gz.bytes,
        files.gz.sha256,
        files.metadata.bytes,
        files.metadata.sha256,
      ],
    );
  }

  async delete(id: number): Promise<void> {
    await this.db.query('DELETE FROM export_versions WHERE id = $1', [id]);
  }
}
