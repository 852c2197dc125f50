import {
  Body,
  Controller,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser, StaffOnly } from '../common/auth/auth.decorators.js';
import type { Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { BodyOrForm } from '../common/validation/form-body.decorator.js';
import { SUBMISSION_PHOTO_UPLOAD } from '../common/media/photo-upload.interceptor.js';
import type { UploadedPhoto } from '../libraries/libraries.service.js';
import {
  AuditActorResponse,
  AuditEventPageResponse,
  AuditLibraryResponse,
  AuditQueryDto,
  type AuditEventResponse,
} from '../moderation-audit/dto/moderation-audit.dto.js';
import { ModerationAuditService } from '../moderation-audit/moderation-audit.service.js';
import {
  IdParamDto,
  ModerationLibrariesQueryDto,
  ModerationLibraryPageResponse,
  ModerationLibraryResponse,
  ModerationPhotoPageResponse,
  ModerationPhotoResponse,
  ModerationPhotosQueryDto,
  ModerationReportPageResponse,
  ModerationReportResponse,
  ModerationReportsQueryDto,
  ModerationSummaryResponse,
  ReviewChangesDto,
  StaffUpdateLibraryDto,
  StaffUpdateLibraryForm,
  UpdatePhotoStatusDto,
  UpdateReportStatusDto,
} from './dto/moderation.dto.js';
import { ModerationService } from './moderation.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

const actorOf = (user: AuthUser) => ({ id: user.id, username: user.username });

/** Staff moderation API (decisions §5). Literal paths are declared before `{slug}`. */
@ApiTags('moderation')
@ApiExtraModels(
  AuditActorResponse,
  AuditLibraryResponse,
  StaffUpdateLibraryDto,
  StaffUpdateLibraryForm,
)
@StaffOnly()
@Controller('libraries/moderation')
export class ModerationController {
  constructor(
    private readonly moderation: ModerationService,
    private readonly audit: ModerationAuditService,
  ) {}

  /** Pending work and totals. */
  @ReadRoute(ModerationSummaryResponse, 'summary')
  summary(): Promise<ModerationSummaryResponse> {
    return this.moderation.summary();
  }

  /** The moderation audit trail, newest first, filtered by kind, actor (username) and library (slug). */
  @ReadRoute(AuditEventPageResponse, 'audit')
  auditTrail(@Query() query: AuditQueryDto): Promise<Page<AuditEventResponse>> {
    return this.audit.list(query);
  }

  /** Reports, newest first, filtered by status and reason. */
  @ReadRoute(ModerationReportPageResponse, 'reports')
  reports(@Query() query: ModerationReportsQueryDto): Promise<Page<ModerationReportResponse>> {
    return this.moderation.listReports(query);
  }

  /** Resolve or dismiss a report (or reopen it). */
  @Patch('reports/:id')
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationReportResponse })
  updateReport(
    @CurrentUser() user: AuthUser,
    @Param() params: IdParamDto,
    @Body() body: UpdateReportStatusDto,
  ): Promise<ModerationReportResponse> {
    return this.moderation.setReportStatus(actorOf(user), params.id, body.status);
  }

  /** Community photos, newest first, filtered by status. */
  @ReadRoute(ModerationPhotoPageResponse, 'photos')
  photos(@Query() query: ModerationPhotosQueryDto): Promise<Page<ModerationPhotoResponse>> {
    return this.moderation.listPhotos(query);
  }

  /** Approve or reject a community photo; an approved one becomes the primary photo of a library without one. */
  @Patch('photos/:id')
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationPhotoResponse })
  updatePhoto(
    @CurrentUser() user: AuthUser,
    @Param() params: IdParamDto,
    @Body() body: UpdatePhotoStatusDto,
  ): Promise<ModerationPhotoResponse> {
    return this.moderation.setPhotoStatus(actorOf(user), params.id, body.status);
  }

  /** Libraries of any status, newest first. */
  @ReadRoute(ModerationLibraryPageResponse)
  libraries(@Query() query: ModerationLibrariesQueryDto): Promise<Page<ModerationLibraryResponse>> {
    return this.moderation.listLibraries(query);
  }

  /** One library in any status, with its moderation state and staged changes. */
  @ReadRoute(ModerationLibraryResponse, ':slug')
  library(@Param('slug') slug: string): Promise<ModerationLibraryResponse> {
    return this.moderation.getLibrary(slug);
  }

  /**
   * Approve, reject (with a reason) or return a library to pending, and/or edit any submission field (JSON, or a
   * multipart form whose `photo` replaces the primary photo). Protected fields (origin, permission, provenance)
   * are 400 `Unsupported field: <name>.`; every change is recorded in the audit trail.
   */
  @Patch(':slug')
  @RateLimit('write')
  @UseInterceptors(SUBMISSION_PHOTO_UPLOAD)
  @ApiOperation({
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: { $ref: getSchemaPath(StaffUpdateLibraryDto) } },
        'multipart/form-data': { schema: { $ref: getSchemaPath(StaffUpdateLibraryForm) } },
      },
    },
  })
  @ApiOkResponse({ type: ModerationLibraryResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      '`Unsupported field: <name>.` (origin, permission, provenance), `Latitude and longitude must be provided together.`, `Provide at least one field to update.`, or an invalid photo',
  })
  @ApiNotFoundResponse({ type: ErrorResponse, description: 'No library with this slug' })
  @ApiPayloadTooLargeResponse({ type: ErrorResponse, description: 'Photo must be 8MB or smaller.' })
  updateLibrary(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @Body() raw: Record<string, unknown>,
    @BodyOrForm() body: StaffUpdateLibraryDto,
    @UploadedFile() photo: UploadedPhoto | undefined,
  ): Promise<ModerationLibraryResponse> {
    return this.moderation.updateLibrary(actorOf(user), slug, raw, body, photo);
  }

  /** Apply or discard an owner's staged edit of an approved library. */
  @Post(':slug/changes')
  @HttpCode(200)
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationLibraryResponse })
  reviewChanges(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @Body() body: ReviewChangesDto,
  ): Promise<ModerationLibraryResponse> {
    return this.moderation.reviewChanges(actorOf(user), slug, body);
  }
}
