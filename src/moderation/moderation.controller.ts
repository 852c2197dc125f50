import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { StaffOnly } from '../common/auth/auth.decorators.js';
import type { Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
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
  UpdateLibraryStatusDto,
  UpdatePhotoStatusDto,
  UpdateReportStatusDto,
} from './dto/moderation.dto.js';
import { ModerationService } from './moderation.service.js';

/** Staff moderation API (decisions §5). Literal paths are declared before `{slug}`. */
@ApiTags('moderation')
@StaffOnly()
@Controller('libraries/moderation')
export class ModerationController {
  constructor(private readonly moderation: ModerationService) {}

  /** Pending work and totals. */
  @Get('summary')
  @RateLimit('read')
  @ApiOkResponse({ type: ModerationSummaryResponse })
  summary(): Promise<ModerationSummaryResponse> {
    return this.moderation.summary();
  }

  /** Reports, newest first, filtered by status and reason. */
  @Get('reports')
  @RateLimit('read')
  @ApiOkResponse({ type: ModerationReportPageResponse })
  reports(@Query() query: ModerationReportsQueryDto): Promise<Page<ModerationReportResponse>> {
    return this.moderation.listReports(query);
  }

  /** Resolve or dismiss a report (or reopen it). */
  @Patch('reports/:id')
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationReportResponse })
  updateReport(
    @Param() params: IdParamDto,
    @Body() body: UpdateReportStatusDto,
  ): Promise<ModerationReportResponse> {
    return this.moderation.setReportStatus(params.id, body.status);
  }

  /** Community photos, newest first, filtered by status. */
  @Get('photos')
  @RateLimit('read')
  @ApiOkResponse({ type: ModerationPhotoPageResponse })
  photos(@Query() query: ModerationPhotosQueryDto): Promise<Page<ModerationPhotoResponse>> {
    return this.moderation.listPhotos(query);
  }

  /** Approve or reject a community photo; an approved one becomes the primary photo of a library without one. */
  @Patch('photos/:id')
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationPhotoResponse })
  updatePhoto(
    @Param() params: IdParamDto,
    @Body() body: UpdatePhotoStatusDto,
  ): Promise<ModerationPhotoResponse> {
    return this.moderation.setPhotoStatus(params.id, body.status);
  }

  /** Libraries of any status, newest first. */
  @Get()
  @RateLimit('read')
  @ApiOkResponse({ type: ModerationLibraryPageResponse })
  libraries(@Query() query: ModerationLibrariesQueryDto): Promise<Page<ModerationLibraryResponse>> {
    return this.moderation.listLibraries(query);
  }

  /** One library in any status, with its moderation state and staged changes. */
  @Get(':slug')
  @RateLimit('read')
  @ApiOkResponse({ type: ModerationLibraryResponse })
  library(@Param('slug') slug: string): Promise<ModerationLibraryResponse> {
    return this.moderation.getLibrary(slug);
  }

  /** Approve, reject (with a reason) or return a library to pending. */
  @Patch(':slug')
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationLibraryResponse })
  updateLibrary(
    @Param('slug') slug: string,
    @Body() body: UpdateLibraryStatusDto,
  ): Promise<ModerationLibraryResponse> {
    return this.moderation.setLibraryStatus(slug, body);
  }

  /** Apply or discard an owner's staged edit of an approved library. */
  @Post(':slug/changes')
  @HttpCode(200)
  @RateLimit('write')
  @ApiOkResponse({ type: ModerationLibraryResponse })
  reviewChanges(
    @Param('slug') slug: string,
    @Body() body: ReviewChangesDto,
  ): Promise<ModerationLibraryResponse> {
    return this.moderation.reviewChanges(slug, body);
  }
}
