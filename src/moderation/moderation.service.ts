import { Injectable } from '@nestjs/common';
import type { Transaction } from '../database/database.js';
import { NotFoundError, RefusedError } from '../common/errors/domain-errors.js';
import { MediaStorage } from '../common/media/media-storage.js';
import { paginate, type Page } from '../common/pagination/pagination.js';
import { EnrichmentQueue } from '../enrichment/enrichment.queue.js';
import { LibrariesRepository } from '../libraries/libraries.repository.js';
import { EDITABLE_FIELDS, LibrariesService } from '../libraries/libraries.service.js';
import { PhotoStore, type UploadedPhoto } from '../common/media/photo-store.js';
import { NotificationQueue } from '../notifications/notification.queue.js';
import { LibraryMapper, libraryRef } from '../libraries/library.mapper.js';
import type { PendingPhoto } from '../libraries/library.entity.js';
import type { LibraryRow, LibraryValues } from '../libraries/library.row.js';
import type { AuditKind } from '../moderation-audit/dto/moderation-audit.dto.js';
import {
  ModerationAuditService,
  type AuditActor,
} from '../moderation-audit/moderation-audit.service.js';
import {
  STAFF_PROTECTED_LIBRARY_FIELDS,
  type StaffUpdateLibraryDto,
} from './dto/moderation.dto.js';
import type {
  ModerationLibrariesQueryDto,
  ModerationLibraryResponse,
  ModerationPhotoResponse,
  ModerationPhotosQueryDto,
  ModerationReportResponse,
  ModerationReportsQueryDto,
  ModerationSummaryResponse,
  ReviewChangesDto,
} from './dto/moderation.dto.js';
import {
  ModerationRepository,
  type ModerationLibraryRow,
  type ModerationPhotoRow,
  type ModerationReportRow,
} from './moderation.repository.js';

const LIBRARY_STATUS_KINDS: Record<string, AuditKind> = {
  approved: 'library_approved',
  rejected: 'library_rejected',
  pending: 'library_returned_to_pending',
};
const PHOTO_STATUS_KINDS: Record<string, AuditKind> = {
  approved: 'photo_approved',
  rejected: 'photo_rejected',
  pending: 'photo_returned_to_pending',
};
const REPORT_STATUS_KINDS: Record<string, AuditKind> = {
  resolved: 'report_resolved',
  dismissed: 'report_dismissed',
  open: 'report_reopened',
};

/** Files to take out of public view (or put back) once a decision is committed. */
interface MediaMove {
  action: 'withdraw' | 'restore';
  keys: string[];
  what: string;
}

type FieldChanges = Record<string, { before: unknown; after: unknown }>;

/** A library's current value of a submission field (coordinates are read as lat/lng). */
function currentValue(row: LibraryRow, field: keyof LibraryValues): unknown {
  if (field === 'latitude') return row.lat;
  if (field === 'longitude') return row.lng;
  return row[field];
}

/** Field-level before/after of the values an edit sets; fields it leaves as they are do not appear. */
export function fieldChanges(row: LibraryRow, changes: Partial<LibraryValues>): FieldChanges {
  const result: FieldChanges = {};
  for (const field of EDITABLE_FIELDS) {
    if (!(field in changes)) continue;
    const before = currentValue(row, field);
    const after = changes[field];
    if (before !== after) result[field] = { before, after };
  }
  return result;
}

/**
 * What a community photo's new status does to its library's primary photo: `promote` (approved, and the library has
 * none), `hand_on` (it was the primary and is no longer approved: the newest other approved photo, or none, takes
 * over) or `keep`.
 */
export function primaryPhotoChange(
  status: string,
  primaryKey: string | null,
  photoKey: string,
): 'promote' | 'hand_on' | 'keep' {
  if (status === 'approved') return primaryKey === null ? 'promote' : 'keep';
  return primaryKey === photoKey ? 'hand_on' : 'keep';
}

/** A status update as both the staff edit and the console's status form send it. */
export interface LibraryStatusChange {
  status: string;
  rejection_reason?: string | null;
}

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
    private readonly photoStore: PhotoStore,
    private readonly audit: ModerationAuditService,
    private readonly enrichment: EnrichmentQueue,
    private readonly notifications: NotificationQueue,
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
    if (!row) throw new NotFoundError();
    return this.library(row);
  }

  async setLibraryStatus(
    actor: AuditActor,
    slug: string,
    dto: LibraryStatusChange,
  ): Promise<ModerationLibraryResponse> {
    const move = await this.moderation.transaction(async (tx) => {
      const row = await this.moderation.findLibrary(slug, tx, true);
      if (!row) throw new NotFoundError();
      return this.changeStatus(tx, actor, row, dto, row);
    });
    await this.moveFiles(move);
    return this.getLibrary(slug);
  }

  /**
   * Records a status change; answers what must happen to the library's photo files once it is committed: a
   * rejected library's primary and staged photos leave public view, and come back when it leaves `rejected`.
   */
  private async changeStatus(
    tx: Transaction,
    actor: AuditActor,
    row: LibraryRow,
    dto: LibraryStatusChange,
    photo: { photo_key: string | null; thumbnail_key: string | null },
  ): Promise<MediaMove | null> {
    const reason = dto.status === 'rejected' ? (dto.rejection_reason ?? '') : '';
    await this.moderation.setLibraryStatus(tx, row.id, dto.status, reason);
    await this.audit.record(tx, LIBRARY_STATUS_KINDS[dto.status], actor, row.id, {
      from: row.status,
      to: dto.status,
      ...(dto.status === 'rejected' ? { reason } : {}),
    });
    if (dto.status !== row.status && (dto.status === 'approved' || dto.status === 'rejected')) {
      await this.notifications.decision(
        tx,
        row.created_by,
        dto.status === 'approved' ? 'library_approved' : 'library_rejected',
        {
          library_id: row.id,
          slug: row.slug,
          name: row.name,
          ...(dto.status === 'rejected' ? { reason } : {}),
        },
      );
    }
    const rejecting = dto.status === 'rejected' && row.status !== 'rejected';
    const unrejecting = dto.status !== 'rejected' && row.status === 'rejected';
    if (!rejecting && !unrejecting) return null;
    const keys = [
      photo.photo_key,
      photo.thumbnail_key,
      row.pending_photo?.photo_key,
      row.pending_photo?.thumbnail_key,
    ].filter((key): key is string => Boolean(key));
    return { action: rejecting ? 'withdraw' : 'restore', keys, what: `library ${row.slug}` };
  }

  /** Withdraws or restores files after the decision is committed; a failure is logged, the decision stands. */
  private async moveFiles(move: MediaMove | null): Promise<void> {
    if (move) await this.photoStore.move(move.action, move.keys, move.what);
  }

  /**
   * Staff edit (PATCH /libraries/moderation/{slug}): any submission field, applied in place whatever the status
   * (an owner's staged edit stays staged for staff to decide), a new primary photo, and optionally a status
   * change. Recorded field by field (before/after) in the audit trail, in the same transaction.
   */
  async updateLibrary(
    actor: AuditActor,
    slug: string,
    rawBody: Record<string, unknown>,
    dto: StaffUpdateLibraryDto,
    file: UploadedPhoto | undefined,
  ): Promise<ModerationLibraryResponse> {
    const changes = this.librariesService.editChanges(rawBody, dto, STAFF_PROTECTED_LIBRARY_FIELDS);
    if (Object.keys(changes).length === 0 && !file && dto.status === undefined)
      throw new RefusedError('Provide at least one field to update.');
    if (!(await this.moderation.findLibrary(slug))) throw new NotFoundError();

    const photo = file ? await this.photoStore.store(file, 'libraries') : null;
    let replaced: PendingPhoto | null = null;
    let move: MediaMove | null = null;
    try {
      await this.moderation.transaction(async (tx) => {
        const row = await this.moderation.findLibrary(slug, tx, true);
        if (!row) throw new NotFoundError();
        const fields = fieldChanges(row, changes);
        if (Object.keys(fields).length > 0 || photo) {
          const applied = Object.fromEntries(
            Object.entries(changes).filter(([field]) => field in fields),
          ) as Partial<LibraryValues>;
          // A coordinate pair moves together, even when only one of the two differs.
          if ('latitude' in fields || 'longitude' in fields) {
            applied.latitude = changes.latitude;
            applied.longitude = changes.longitude;
          }
          const aiFields = row.ai_generated_fields.filter((field) => !(field in applied));
          await this.libraries.updateValues(tx, row.id, applied, photo, aiFields);
          if (photo && row.photo_key && row.thumbnail_key)
            replaced = { photo_key: row.photo_key, thumbnail_key: row.thumbnail_key };
          await this.audit.record(tx, 'library_edited', actor, row.id, {
            changes: fields,
            ...(photo
              ? {
                  photo: {
                    before: this.media.url(row.photo_key),
                    after: this.media.url(photo.photo_key),
                  },
                }
              : {}),
          });
        }
        if (dto.status !== undefined)
          move = await this.changeStatus(tx, actor, row, dto as LibraryStatusChange, photo ?? row);
      });
    } catch (error) {
      if (photo) await this.photoStore.discard(photo);
      throw error;
    }
    if (replaced) await this.librariesService.discardReplacedPhoto(replaced);
    await this.moveFiles(move);
    return this.getLibrary(slug);
  }

  /** Applies (approve) or discards (reject) an owner's staged edit of an approved library. */
  async reviewChanges(
    actor: AuditActor,
    slug: string,
    dto: ReviewChangesDto,
  ): Promise<ModerationLibraryResponse> {
    const obsolete: PendingPhoto[] = [];
    await this.moderation.transaction(async (tx) => {
      const row = await this.moderation.findLibrary(slug, tx, true);
      if (!row) throw new NotFoundError();
      if (!row.pending_changes && !row.pending_photo)
        throw new RefusedError('No staged changes to review.');
      const changes = (row.pending_changes ?? {}) as Partial<LibraryValues>;
      if (dto.action === 'approve') {
        const aiFields = row.ai_generated_fields.filter((field) => !(field in changes));
        await this.libraries.updateValues(tx, row.id, changes, row.pending_photo, aiFields);
        if (row.pending_photo && row.photo_key && row.thumbnail_key) {
          obsolete.push({ photo_key: row.photo_key, thumbnail_key: row.thumbnail_key });
        }
      } else if (row.pending_photo) {
        obsolete.push(row.pending_photo);
      }
      await this.moderation.clearStaged(tx, row.id);
      await this.audit.record(
        tx,
        dto.action === 'approve' ? 'staged_edit_applied' : 'staged_edit_rejected',
        actor,
        row.id,
        { changes: fieldChanges(row, changes), photo: row.pending_photo !== null },
      );
    });
    for (const photo of obsolete) await this.librariesService.discardReplacedPhoto(photo);
    return this.getLibrary(slug);
  }

  /**
   * Queues AI enrichment of a library's blank name and description (the console's offer before approving a
   * library without them). False when AI is not configured or nothing is blank.
   */
  async queueEnrichment(slug: string): Promise<boolean> {
    return this.moderation.transaction(async (tx) => {
      const row = await this.moderation.findLibrary(slug, tx, true);
      if (!row) throw new NotFoundError();
      if (row.name && row.description) return false;
      return this.enrichment.enqueue(tx, row.id);
    });
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

  async setReportStatus(
    actor: AuditActor,
    id: number,
    status: string,
  ): Promise<ModerationReportResponse> {
    await this.moderation.transaction(async (tx) => {
      const report = await this.moderation.setReportStatus(tx, id, status);
      if (!report) throw new NotFoundError();
      await this.audit.record(tx, REPORT_STATUS_KINDS[status], actor, report.library_id, {
        report_id: id,
        from: report.previous,
        to: status,
      });
    });
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

  /**
   * Approves, rejects or returns a community photo to pending. A rejected photo's files leave public view once the
   * decision is committed (withdrawn from the media root, so approving it again later restores them).
   */
  async setPhotoStatus(
    actor: AuditActor,
    id: number,
    status: string,
  ): Promise<ModerationPhotoResponse> {
    const photo = await this.moderation.transaction(async (tx) => {
      const changed = await this.moderation.setPhotoStatus(tx, id, status);
      if (!changed) throw new NotFoundError();
      await this.promotePhoto(tx, changed, status);
      await this.audit.record(tx, PHOTO_STATUS_KINDS[status], actor, changed.library_id, {
        photo_id: id,
        from: changed.previous,
        to: status,
      });
      if (status !== changed.previous && (status === 'approved' || status === 'rejected')) {
        await this.notifications.decision(
          tx,
          changed.created_by,
          status === 'approved' ? 'photo_approved' : 'photo_rejected',
          {
            library_id: changed.library_id,
            slug: changed.library_slug,
            name: changed.library_name,
            photo_id: id,
          },
        );
      }
      return changed;
    });
    const keys = [photo.photo_key, photo.thumbnail_key];
    const what = `photo ${id}`;
    if (status === 'rejected') await this.moveFiles({ action: 'withdraw', keys, what });
    else if (photo.previous === 'rejected') await this.moveFiles({ action: 'restore', keys, what });
    return this.photo((await this.moderation.findPhoto(id))!);
  }

  /**
   * The primary-photo rule of a community photo's new status (inside the decision's transaction, the library row
   * locked): approving one whose library has no primary photo makes it the primary; withdrawing the approval of the
   * photo that is the primary hands that role to the newest other approved community photo, or leaves the library
   * without one (a rejected photo is never shown).
   */
  private async promotePhoto(
    tx: Transaction,
    photo: { library_id: number; photo_key: string; thumbnail_key: string },
    status: string,
  ): Promise<void> {
    const primary = await this.moderation.lockPrimaryPhoto(tx, photo.library_id);
    if (primary === undefined) return;
    switch (primaryPhotoChange(status, primary, photo.photo_key)) {
      case 'promote':
        await this.moderation.setPrimaryPhoto(tx, photo.library_id, photo);
        break;
      case 'hand_on':
        await this.moderation.setPrimaryPhoto(
          tx,
          photo.library_id,
          await this.moderation.newestApprovedPhoto(tx, photo.library_id),
        );
        break;
      case 'keep':
        break;
    }
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
      // A rejected photo's files are withdrawn from the media root: no URL would answer.
      photo_url: row.status === 'rejected' ? '' : this.media.url(row.photo_key),
      thumbnail_url: row.status === 'rejected' ? '' : this.media.url(row.thumbnail_key),
      status: row.status,
      created_at: new Date(row.created_at).toISOString(),
    };
  }
}
