import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { ApiError } from '../common/errors/api-error.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import type { MyReportResponse, ReportCreatedResponse } from '../libraries/dto/library.response.js';
import { LibrariesRepository } from '../libraries/libraries.repository.js';
import { libraryRef } from '../libraries/library.mapper.js';
import { LibrariesService, type UploadedPhoto } from '../libraries/libraries.service.js';
import type { CreateReportDto } from './dto/create-report.dto.js';
import { ReportsRepository } from './reports.repository.js';
import { NotificationQueue } from '../notifications/notification.queue.js';

@Injectable()
export class ReportsService {
  constructor(
    private readonly reports: ReportsRepository,
    private readonly libraries: LibrariesRepository,
    private readonly librariesService: LibrariesService,
    private readonly notifications: NotificationQueue,
  ) {}

  /** Reports an approved library (anything else is 404), with an optional photo through the photo pipeline. */
  async create(
    user: AuthUser,
    slug: string,
    dto: CreateReportDto,
    file: UploadedPhoto | undefined,
  ): Promise<ReportCreatedResponse> {
    const library = await this.libraries.findBySlug(slug, null);
    if (!library || library.status !== 'approved') throw ApiError.notFound();
    const photo = file ? await this.librariesService.storePhoto(file, 'reports') : null;
    const row = await this.librariesService.withPhotoFiles(photo, () =>
      this.reports.insert(
        {
          libraryId: library.id,
          userId: user.id,
          reason: dto.reason,
          details: dto.details ?? '',
          photoKey: photo?.photo_key ?? null,
          thumbnailKey: photo?.thumbnail_key ?? null,
        },
        (manager) => this.notifications.moderationWork(manager, user.id),
      ),
    );
    return { id: row.id, reason: row.reason, created_at: new Date(row.created_at).toISOString() };
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
