import { Controller, Param, Post, Query, UploadedFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  IdempotencyKey,
  IdempotentFormCreate,
} from '../common/idempotency/idempotency-key.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { PhotoUpload } from '../common/media/photo-upload.interceptor.js';
import { PaginationQueryDto, type Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { FormBody } from '../common/validation/form-body.decorator.js';
import {
  MyReportPageResponse,
  ReportCreatedResponse,
  type MyReportResponse,
} from '../libraries/dto/library.response.js';
import type { UploadedPhoto } from '../libraries/libraries.service.js';
import { CreateReportDto, CreateReportForm } from './dto/create-report.dto.js';
import { ReportsService } from './reports.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

const REPORT_PHOTO_UPLOAD = PhotoUpload({
  field: 'photo',
  maxBytes: 5 * 1024 * 1024,
  tooLargeMessage: 'Photo must be 5MB or smaller.',
});

@ApiTags('reports')
@Controller('libraries')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  /** Report a problem with an approved library, optionally with a photo (multipart/form-data, max 5 MB). */
  @Post(':slug/report')
  @RateLimit('write')
  @IdempotentFormCreate({
    form: CreateReportForm,
    created: ReportCreatedResponse,
    upload: REPORT_PHOTO_UPLOAD,
  })
  create(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @FormBody() form: CreateReportDto,
    @UploadedFile() photo: UploadedPhoto | undefined,
    @IdempotencyKey() idempotencyKey: string | null,
  ): Promise<ReportCreatedResponse> {
    return this.reports.create(user, slug, form, photo, idempotencyKey);
  }

  /** The caller's reports, newest first. */
  @ReadRoute(MyReportPageResponse, 'mine/reports')
  mine(
    @CurrentUser() user: AuthUser,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<MyReportResponse>> {
    return this.reports.mine(user, query);
  }
}
