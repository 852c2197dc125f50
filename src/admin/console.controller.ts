import {
  Body,
  Get,
  Param,
  Post,
  Query,
  Req,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { FormBody } from '../common/validation/form-body.decorator.js';
import { AppConfig } from '../config/app-config.js';
import { SUBMISSION_PHOTO_UPLOAD } from '../common/media/photo-upload.interceptor.js';
import type { UploadedPhoto } from '../libraries/libraries.service.js';
import {
  IdParamDto,
  ReviewChangesDto,
  UpdatePhotoStatusDto,
  UpdateReportStatusDto,
} from '../moderation/dto/moderation.dto.js';
import { ModerationAuditService } from '../moderation-audit/moderation-audit.service.js';
import { ModerationService } from '../moderation/moderation.service.js';
import { REPORT_REASONS } from '../reports/dto/create-report.dto.js';
import { StatisticsService } from '../statistics/statistics.service.js';
import { clearCookie, consoleReturnPath, readCookie, SESSION_COOKIE } from './console-http.js';
import { ConsolePages, consoleActor, type ConsoleRequest } from './console-pages.js';
import { ConsoleSessionService } from './console-session.service.js';
import {
  ConsoleEditLibraryDto,
  ConsoleLibrariesQueryDto,
  ConsoleLibraryStatusDto,
  ConsolePhotosQueryDto,
  ConsoleReportsQueryDto,
} from './dto/console.dto.js';
import { growthChartSvg } from './growth-chart.js';
import { stagedDiff } from './staged-diff.js';
import { StaffConsole } from './staff-console.decorator.js';

const LIBRARY_DONE: Record<string, string> = {
  approved: 'Library approved: it is now public.',
  rejected: 'Library rejected.',
  pending: 'Library returned to pending.',
};

/**
 * The staff console's moderation pages. Every action calls the moderation service the JSON API uses, then
 * redirects (post/redirect/get) with a message.
 */
@StaffConsole()
export class ConsoleController {
  constructor(
    private readonly pages: ConsolePages,
    private readonly sessions: ConsoleSessionService,
    private readonly moderation: ModerationService,
    private readonly statistics: StatisticsService,
    private readonly audit: ModerationAuditService,
    private readonly config: AppConfig,
  ) {}

  @Post('logout')
  @RateLimit('write')
  async signOut(@Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    await this.sessions.signOut(readCookie(req, SESSION_COOKIE));
    clearCookie(req, res, SESSION_COOKIE);
    this.pages.redirect(req, res, '/admin/login', { kind: 'notice', text: 'Signed out.' });
  }

  @Get()
  @RateLimit('read')
  async dashboard(@Req() req: ConsoleRequest, @Res() res: Response): Promise<void> {
    const [summary, statistics] = await Promise.all([
      this.moderation.summary(),
      this.statistics.get(),
    ]);
    const caption = `Approved libraries, cumulative (${statistics.granularity})`;
    this.pages.render(req, res, 'dashboard', {
      title: 'Dashboard',
      section: 'dashboard',
      summary,
      statistics,
      chart: growthChartSvg(statistics.cumulative_series, caption),
    });
  }

  @Get('libraries')
  @RateLimit('read')
  async libraries(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query() query: ConsoleLibrariesQueryDto,
  ): Promise<void> {
    const page = await this.moderation.listLibraries(query);
    this.pages.renderList(req, res, 'libraries', page, {
      title: 'Libraries',
      section: 'libraries',
      query,
    });
  }

  @Get('libraries/:slug')
  @RateLimit('read')
  async library(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
  ): Promise<void> {
    const library = await this.moderation.getLibrary(slug);
    const history = await this.audit.list({ library: slug, page: 1, page_size: 50 });
    this.pages.render(req, res, 'library', {
      title: library.name || library.slug,
      section: 'libraries',
      library,
      diff: stagedDiff(library),
      history,
      editToken: encodeURIComponent(req.consoleUser!.csrfToken),
    });
  }

  /**
   * Approving a library whose name or description is blank asks first (it would be listed without them), offering
   * to fill them by hand or, with AI configured, to queue enrichment.
   */
  @Post('libraries/:slug/status')
  @RateLimit('write')
  async setLibraryStatus(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Body() form: ConsoleLibraryStatusDto,
  ): Promise<void> {
    if (form.status === 'approved' && form.confirm_blank !== 'yes') {
      const current = await this.moderation.getLibrary(slug);
      const blank = [
        ...(current.name ? [] : ['name']),
        ...(current.description ? [] : ['description']),
      ];
      if (blank.length) {
        this.pages.render(req, res, 'approve-blank', {
          title: `Approve ${current.name || current.slug}?`,
          section: 'libraries',
          library: current,
          blank,
          aiConfigured: this.config.ai !== null,
        });
        return;
      }
    }
    const library = await this.moderation.setLibraryStatus(consoleActor(req), slug, form);
    this.pages.redirect(req, res, `/admin/libraries/${encodeURIComponent(library.slug)}`, {
      kind: 'notice',
      text: LIBRARY_DONE[library.status] ?? 'Saved.',
    });
  }

  /** The staff edit form (multipart: a new photo replaces the primary one). */
  @Post('libraries/:slug/edit')
  @RateLimit('write')
  @UseInterceptors(SUBMISSION_PHOTO_UPLOAD)
  async editLibrary(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @FormBody() form: ConsoleEditLibraryDto,
    @UploadedFile() photo: UploadedPhoto | undefined,
  ): Promise<void> {
    const raw = { ...((req.body ?? {}) as Record<string, unknown>) };
    delete raw._return;
    const library = await this.moderation.updateLibrary(consoleActor(req), slug, raw, form, photo);
    this.pages.redirect(req, res, `/admin/libraries/${encodeURIComponent(library.slug)}`, {
      kind: 'notice',
      text: 'Library saved.',
    });
  }

  @Post('libraries/:slug/enrich')
  @RateLimit('write')
  async enrich(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
  ): Promise<void> {
    const queued = await this.moderation.queueEnrichment(slug);
    this.pages.redirect(
      req,
      res,
      `/admin/libraries/${encodeURIComponent(slug)}`,
      queued
        ? {
            kind: 'notice',
            text: 'AI enrichment queued: the blank name and description will be filled shortly. Approve the library once they are.',
          }
        : {
            kind: 'error',
            text:
              this.config.ai === null
                ? 'AI enrichment is not configured: fill the name and description by hand.'
                : 'Nothing to enrich: the name and description are already filled.',
          },
    );
  }

  @Post('libraries/:slug/changes')
  @RateLimit('write')
  async reviewChanges(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Body() form: ReviewChangesDto,
  ): Promise<void> {
    const library = await this.moderation.reviewChanges(consoleActor(req), slug, form);
    this.pages.redirect(req, res, `/admin/libraries/${encodeURIComponent(library.slug)}`, {
      kind: 'notice',
      text:
        form.action === 'approve'
          ? 'Staged changes applied.'
          : 'Staged changes rejected: the library is unchanged.',
    });
  }

  @Get('photos')
  @RateLimit('read')
  async photos(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query() query: ConsolePhotosQueryDto,
  ): Promise<void> {
    const page = await this.moderation.listPhotos(query);
    this.pages.renderList(req, res, 'photos', page, {
      title: 'Community photos',
      section: 'photos',
      query,
    });
  }

  @Post('photos/:id')
  @RateLimit('write')
  async setPhotoStatus(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param() params: IdParamDto,
    @Body() form: UpdatePhotoStatusDto,
  ): Promise<void> {
    const photo = await this.moderation.setPhotoStatus(consoleActor(req), params.id, form.status);
    this.pages.redirect(req, res, consoleReturnPath(this.returnOf(req), req), {
      kind: 'notice',
      text: `Photo #${photo.id} of “${photo.library.name}” is now ${photo.status}.`,
    });
  }

  @Get('reports')
  @RateLimit('read')
  async reports(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query() query: ConsoleReportsQueryDto,
  ): Promise<void> {
    const page = await this.moderation.listReports(query);
    this.pages.renderList(req, res, 'reports', page, {
      title: 'Reports',
      section: 'reports',
      query,
      reasons: REPORT_REASONS,
    });
  }

  @Post('reports/:id')
  @RateLimit('write')
  async setReportStatus(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param() params: IdParamDto,
    @Body() form: UpdateReportStatusDto,
  ): Promise<void> {
    const report = await this.moderation.setReportStatus(consoleActor(req), params.id, form.status);
    this.pages.redirect(req, res, consoleReturnPath(this.returnOf(req), req), {
      kind: 'notice',
      text: `Report #${report.id} on “${report.library.name}” is now ${report.status}.`,
    });
  }

  /** The hidden `_return` field of list forms (validated by consoleReturnPath; the DTOs drop unknown fields). */
  private returnOf(req: ConsoleRequest): unknown {
    return ((req.body ?? {}) as { _return?: unknown })._return;
  }
}
