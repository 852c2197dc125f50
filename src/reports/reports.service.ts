import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { NotFoundError } from '../common/errors/domain-errors.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import type { MyReportResponse, ReportCreatedResponse } from '../libraries/dto/library.response.js';
import { LibrariesRepository } from '../libraries/libraries.repository.js';
import { libraryRef } from '../libraries/library.mapper.js';
import { PhotoStore, type UploadedPhoto } from '../common/media/photo-store.js';
import type { CreateReportDto } from './dto/create-report.dto.js';
import { NotificationQueue } from '../notifications/notification.queue.js';
import { ReportsRepository, type ReportRow } from './reports.repository.js';
import { IdempotencyService } from '../common/idempotency/idempotency.service.js';

function reportResponse(row: ReportRow): ReportCreatedResponse {
  return { id: row.id, reason: row.reason, created_at: new Date(row.created_at).toISOString() };
}

@Injectable()
export class ReportsService {
  constructor(
    private readonly reports: ReportsRepository,
    private readonly libraries: LibrariesRepository,
    private readonly photoStore: PhotoStore,
    private readonly notifications: NotificationQueue,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * Reports an approved library (anything else is 404), with an optional photo through the photo pipeline. With an
   * `Idempotency-Key`, a retry of the same request answers the original result, another request 409.
   */
  async create(
    user: AuthUser,
    slug: string,
    dto: CreateReportDto,
    file: UploadedPhoto | undefined,
    idempotencyKey: string | null = null,
  ): Promise<ReportCreatedResponse> {
    const request = await this.idempotency.identify(
      user.id,
      idempotencyKey,
      'reports.create',
      { slug, ...dto },
      file?.path ?? null,
    );
    const earlier = await this.idempotency.replay(request);
    if (earlier) return earlier.body as ReportCreatedResponse;
    const library = await this.libraries.findBySlug(slug, null);
    if (!library || library.status !== 'approved') throw new NotFoundError();
    const photo = file ? await this.photoStore.store(file, 'reports') : null;
    try {
      const row = await this.photoStore.withFiles(photo, () =>
        this.reports.insert(
          {
            libraryId: library.id,
            userId: user.id,
            reason: dto.reason,
            details: dto.details ?? '',
            photoKey: photo?.photo_key ?? null,
            thumbnailKey: photo?.thumbnail_key ?? null,
          },
          async (tx, inserted) => {
            await this.notifications.moderationWork(tx, user.id);
            await this.idempotency.record(tx, request, inserted.id, 201, reportResponse(inserted));
          },
        ),
      );
      return reportResponse(row);
    } catch (error) {
      const first = await this.idempotency.replayAfterFailure(request, error);
      if (first) return first.body as ReportCreatedResponse;
      throw error;
    }
  }

  mine(user: AuthUser, query: PaginationQueryDto): Promise<Page<MyReportResponse>> {
    return paginate(
      query,
      () => this.reports.countByCreator(user.id),
      async (limit, offset) =>
        (await this.reports.findByCreator(user.id, limit, offset)).map((row) => ({
          id: row.id,
          library: libraryRef(row),
          reason: row.reason,
          status: row.status,
          created_at: new Date(row.created_at).toISOString(),
        })),
    );
  }
}
