import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { MediaStorage } from '../common/media/media-storage.js';
import { paginate, type Page } from '../common/pagination/pagination.js';
import { LibrariesRepository } from '../libraries/libraries.repository.js';
import { LibrariesService } from '../libraries/libraries.service.js';
import { LibraryMapper, libraryRef } from '../libraries/library.mapper.js';
import type { PendingPhoto } from '../libraries/library.entity.js';
import type { LibraryValues } from '../libraries/library.row.js';
import type {
  ModerationLibrariesQueryDto,
  ModerationLibraryResponse,
  ModerationPhotoResponse,
  ModerationPhotosQueryDto,
  ModerationReportResponse,
  ModerationReportsQueryDto,
  ModerationSummaryResponse,
  ReviewChangesDto,
  UpdateLibraryStatusDto,
} from './dto/moderation.dto.js';
import {
  ModerationRepository,
  type ModerationLibraryRow,
  type ModerationPhotoRow,
  type ModerationReportRow,
} from './moderation.repository.js';

/**
 * Staff moderation of libraries, staged owner edits, reports and community photos. Approving anything here has no
 * side effect beyond this database: in particular it never reaches the map-contribution workflow.
 */
@Injectable()
export class ModerationService {
  constructor(
    private readonly moderation: ModerationRepository,
    private readonly libraries: LibrariesRepository,
    private readonly librariesService: LibrariesService,
    private readonly mapper: LibraryMapper,
    private readonly media: MediaStorage,
  ) {}

  async summary(): Promise<ModerationSummaryResponse> {
    const counts = await this.moderation.summary();
    return {
      ...counts,
      total_pending:
        counts.pending_libraries_count + counts.open_reports_count + counts.pending_photos_count,
    };
  }

  listLibraries(query: ModerationLibrariesQueryDto): Promise<Page<ModerationLibraryResponse>> {
    const filter = {
      status: query.status,
      q: query.q || undefined,
      country: query.country,
      source: query.source,
    };
    return paginate(
      query,
      () => this.moderation.countLibraries(filter),
      async (limit, offset) =>
        (await this.moderation.findLibraries(filter, limit, offset)).map((row) =>
          this.library(row),
        ),
    );
  }

  async getLibrary(slug: string): Promise<ModerationLibraryResponse> {
    const row = await this.moderation.findLibrary(slug);
    if (!row) throw ApiError.notFound();
    return this.library(row);
  }

  async setLibraryStatus(
    slug: string,
    dto: UpdateLibraryStatusDto,
  ): Promise<ModerationLibraryResponse> {
    await this.moderation.transaction(async (manager) => {
      const row = await this.moderation.findLibrary(slug, manager, true);
      if (!row) throw ApiError.notFound();
      const reason = dto.status === 'rejected' ? (dto.rejection_reason ?? '') : '';
      await this.moderation.setLibraryStatus(manager, row.id, dto.status, reason);
    });
    return this.getLibrary(slug);
  }

  /** Applies (approve) or discards (reject) an owner's staged edit of an approved library. */
  async reviewChanges(slug: string, dto: ReviewChangesDto): Promise<ModerationLibraryResponse> {
    const obsolete: PendingPhoto[] = [];
    await this.moderation.transaction(async (manager) => {
      const row = await this.moderation.findLibrary(slug, manager, true);
      if (!row) throw ApiError.notFound();
      if (!row.pending_changes && !row.pending_photo)
        throw ApiError.badRequest('No staged changes to review.');
      if (dto.action === 'approve') {
        const changes = (row.pending_changes ?? {}) as Partial<LibraryValues>;
        const aiFields = row.ai_generated_fields.filter((field) => !(field in changes));
        await this.libraries.updateValues(manager, row.id, changes, row.pending_photo, aiFields);
        if (row.pending_photo && row.photo_key && row.thumbnail_key) {
          obsolete.push({ photo_key: row.photo_key, thumbnail_key: row.thumbnail_key });
        }
      } else if (row.pending_photo) {
        obsolete.push(row.pending_photo);
      }
      await this.moderation.clearStaged(manager, row.id);
    });
    for (const photo of obsolete) await this.librariesService.discardReplacedPhoto(photo);
    return this.getLibrary(slug);
  }

  listReports(query: ModerationReportsQueryDto): Promise<Page<ModerationReportResponse>> {
    const filters = { status: query.status, reason: query.reason };
    return paginate(
      query,
      () => this.moderation.countReports(filters),
      async (limit, offset) =>
        (await this.moderation.findReports(filters, limit, offset)).map((row) => this.report(row)),
    );
  }

  async setReportStatus(id: number, status: string): Promise<ModerationReportResponse> {
    if (!(await this.moderation.setReportStatus(id, status))) throw ApiError.notFound();
    return this.report((await this.moderation.findReport(id))!);
  }

  listPhotos(query: ModerationPhotosQueryDto): Promise<Page<ModerationPhotoResponse>> {
    const filters = { status: query.status };
    return paginate(
      query,
      () => this.moderation.countPhotos(filters),
      async (limit, offset) =>
        (await this.moderation.findPhotos(filters, limit, offset)).map((row) => this.photo(row)),
    );
  }

  async setPhotoStatus(id: number, status: string): Promise<ModerationPhotoResponse> {
    if (!(await this.moderation.setPhotoStatus(id, status))) throw ApiError.notFound();
    return this.photo((await this.moderation.findPhoto(id))!);
  }

  private userRef(id: number | null, username: string | null) {
    return id !== null && username !== null ? { id, username } : null;
  }

  private library(row: ModerationLibraryRow): ModerationLibraryResponse {
    return {
      ...this.mapper.item(row),
      status: row.status,
      rejection_reason: row.rejection_reason,
      created_by: this.userRef(row.created_by, row.created_by_username),
      pending_changes: this.mapper.pendingChanges(row),
    };
  }

  private libraryRef(row: ModerationReportRow | ModerationPhotoRow) {
    return { ...libraryRef(row), address: row.library_address };
  }

  private report(row: ModerationReportRow): ModerationReportResponse {
    return {
      id: row.id,
      library: this.libraryRef(row),
      created_by: this.userRef(row.created_by, row.created_by_username),
      reason: row.reason,
      details: row.details,
      photo_url: this.media.url(row.photo_key),
      status: row.status,
      created_at: new Date(row.created_at).toISOString(),
    };
  }

  private photo(row: ModerationPhotoRow): ModerationPhotoResponse {
    return {
      id: row.id,
      library: this.libraryRef(row),
      created_by: this.userRef(row.created_by, row.created_by_username),
      caption: row.caption,
      photo_url: this.media.url(row.photo_key),
      thumbnail_url: this.media.url(row.thumbnail_key),
      status: row.status,
      created_at: new Date(row.created_at).toISOString(),
    };
  }
}
