import {
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response.js';
import {
  ApiIdempotencyKeyHeader,
  IDEMPOTENCY_CONFLICT_DESCRIPTION,
  IdempotencyKey,
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

@ApiTags('reports')
@Controller('libraries')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  /** Report a problem with an approved library, optionally with a photo (multipart/form-data, max 5 MB). */
  @Post(':slug/report')
  @HttpCode(201)
  @RateLimit('write')
  @UseInterceptors(
    PhotoUpload({
      field: 'photo',
      maxBytes: 5 * 1024 * 1024,
      tooLargeMessage: 'Photo must be 5MB or smaller.',
    }),
  )
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: CreateReportForm })
  @ApiCreatedResponse({
    type: ReportCreatedResponse,
    description: 'Created; also the answer to a retry with the same Idempotency-Key and request.',
  })
  @ApiIdempotencyKeyHeader()
  @ApiConflictResponse({ type: ErrorResponse, description: IDEMPOTENCY_CONFLICT_DESCRIPTION })
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
  @Get('mine/reports')
  @RateLimit('read')
  @ApiOkResponse({ type: MyReportPageResponse })
  mine(
    @CurrentUser() user: AuthUser,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<MyReportResponse>> {
    return this.reports.mine(user, query);
  }
}
