import { Body, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ConsolePages,
  consoleActor,
  pager,
  type ConsoleRequest,
} from '../../admin/console-pages.js';
import { StaffConsole } from '../../admin/staff-console.decorator.js';
import { AUDIT_KINDS, type AuditKind } from '../../moderation-audit/dto/moderation-audit.dto.js';
import { ModerationAuditService } from '../../moderation-audit/moderation-audit.service.js';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator.js';
import { CONTRIBUTION_STATUSES } from '../domain/state-machine.js';
import { ResolveDto, VerifiedQueryDto, verifiedValues } from '../dto/map-contribution.dto.js';
import { ContributionRecordsService } from '../contribution-records.service.js';
import { DuplicateCheckService } from '../duplicate-check.service.js';
import { PermissionWithdrawalService } from '../permission-withdrawal.service.js';
import { ReconciliationService } from '../reconciliation.service.js';
import { WriteSagaService } from '../write-saga.service.js';
import {
  ConsoleAuditQueryDto,
  ConsoleBatchConfirmDto,
  ConsoleBatchQueryDto,
  ConsoleConfirmDto,
  ConsoleContributionsQueryDto,
  ConsoleWithdrawDto,
  MAP_CONTRIBUTION_KIND,
} from './console.dto.js';

const RESOLVED: Record<ResolveDto['outcome'], string> = {
  same_feature: 'Resolved as the same feature: the existing element is linked, nothing is created.',
  different_feature:
    'Resolved as a different feature (reason recorded). Run a fresh check before writing.',
  unclear: 'Recorded as unclear: the library stays a possible duplicate.',
};

/**
 * The staff console's map-contribution pages (/admin/contributions and /admin/audit). Every action is the staff service the
 * JSON API uses; the write needs the preview, then a separate confirmation page with an explicit confirmation.
 */
@StaffConsole()
export class MapContributionConsoleController {
  constructor(
    private readonly pages: ConsolePages,
    private readonly records: ContributionRecordsService,
    private readonly checks: DuplicateCheckService,
    private readonly saga: WriteSagaService,
    private readonly reconciliation: ReconciliationService,
    private readonly withdrawal: PermissionWithdrawalService,
    private readonly audit: ModerationAuditService,
  ) {}

  @Get('contributions')
  @RateLimit('read')
  async list(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query() query: ConsoleContributionsQueryDto,
  ): Promise<void> {
    const page = await this.records.list(query);
    this.pages.renderList(req, res, 'contributions', page, {
      title: 'Map contributions',
      section: 'contributions',
      query,
      statuses: CONTRIBUTION_STATUSES,
    });
  }

  /** A batch write's confirmation page: every selected library's exact tags and what would leave it out. */
  @Get('contributions-batch')
  @RateLimit('read')
  async batchPage(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query() query: ConsoleBatchQueryDto,
  ): Promise<void> {
    const verified = verifiedValues(query);
    const items = [];
    for (const slug of query.slugs) {
      const [record, { preview, confirmBlockers }] = await Promise.all([
        this.records.detail(slug),
        this.records.dryRun(slug, verified),
      ]);
      items.push({ record, preview, blockers: confirmBlockers });
    }
    const closed = items
      .flatMap((item) => item.blockers)
      .filter((b) => b.code === 'writes_disabled');
    this.pages.render(req, res, 'batch', {
      title: 'Confirm a batch write',
      section: 'contributions',
      items,
      verified,
      writeBlockers: closed.slice(0, 1),
      writable: items.filter((item) => item.blockers.length === 0).length,
    });
  }

  @Post('contributions-batch')
  @RateLimit('write')
  async batchConfirm(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Body() form: ConsoleBatchConfirmDto,
  ): Promise<void> {
    const result = await this.saga.batchConfirm(
      form.slugs,
      consoleActor(req),
      verifiedValues(form),
    );
    const items = result.batches.flatMap((batch) =>
      batch.items.map((item) => ({ ...item, changeset: batch.changeset_id })),
    );
    const written = items.filter((item) => item.status === 'contributed' && item.mapdb_element_id);
    const lines = items.map((item) =>
      item.mapdb_element_id && item.status === 'contributed'
        ? `${item.slug}: node ${item.mapdb_element_id} in changeset ${item.changeset}`
        : `${item.slug}: ${item.status.replace(/_/g, ' ')}${item.blockers.length ? ` (${item.blockers.map((b) => b.message).join(' ')})` : ''}`,
    );
    this.pages.redirect(req, res, '/admin/contributions', {
      kind: written.length === items.length ? 'notice' : 'error',
      text: `Batch write: ${written.length} of ${items.length} libraries written in ${result.batches.filter((b) => b.changeset_id !== null).length} changeset(s).`,
      details: lines,
    });
  }

  /**
   * The audit page: every staff decision (moderation audit trail) and every map-contribution event, each newest
   * first and paginated, filtered by kind, actor and library.
   */
  @Get('audit')
  @RateLimit('read')
  async history(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query() query: ConsoleAuditQueryDto,
  ): Promise<void> {
    const filter = { actor: query.actor, library: query.library };
    const showDecisions = query.kind !== MAP_CONTRIBUTION_KIND;
    const showEvents = query.kind === undefined || query.kind === MAP_CONTRIBUTION_KIND;
    const [decisions, events] = await Promise.all([
      showDecisions
        ? this.audit.list({
            ...filter,
            kind: query.kind as AuditKind | undefined,
            page: query.page,
            page_size: query.page_size,
          })
        : null,
      showEvents
        ? this.records.auditHistory({ page: query.events_page, page_size: query.page_size }, filter)
        : null,
    ]);
    this.pages.render(req, res, 'history', {
      title: 'Audit history',
      section: 'audit',
      query,
      kinds: AUDIT_KINDS,
      decisions,
      decisionsPager: decisions ? pager(req, decisions.pagination) : null,
      events,
      eventsPager: events ? pager(req, events.pagination, 'events_page') : null,
    });
  }

  @Get('contributions/:slug')
  @RateLimit('read')
  async detail(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
  ): Promise<void> {
    const record = await this.records.detail(slug);
    this.pages.render(req, res, 'contribution', {
      title: `Contribution: ${record.library.name || record.library.slug}`,
      section: 'contributions',
      record,
      checkUnavailable: this.checks.unavailable(),
    });
  }

  @Post('contributions/:slug/check')
  @RateLimit('write')
  async check(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
  ): Promise<void> {
    const unavailable = this.checks.unavailable();
    if (unavailable) {
      this.pages.redirect(req, res, this.base(slug), { kind: 'error', text: unavailable });
      return;
    }
    const record = await this.checks.check(slug, consoleActor(req));
    const found = record.duplicate_candidates.length;
    this.pages.redirect(req, res, this.base(slug), {
      kind: record.last_error_code && record.status !== 'no_match' ? 'error' : 'notice',
      text: `Duplicate check done: ${record.status.replace(/_/g, ' ')}${found ? ` (${found} candidate${found === 1 ? '' : 's'})` : ''}.`,
    });
  }

  @Post('contributions/:slug/resolve')
  @RateLimit('write')
  async resolve(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Body() form: ResolveDto,
  ): Promise<void> {
    await this.checks.resolve(slug, consoleActor(req), form);
    this.pages.redirect(req, res, this.base(slug), {
      kind: 'notice',
      text: RESOLVED[form.outcome],
    });
  }

  @Get('contributions/:slug/preview')
  @RateLimit('read')
  async preview(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Query() query: VerifiedQueryDto,
  ): Promise<void> {
    await this.renderPreview(req, res, slug, query, 'preview', 'Preview');
  }

  /** The second step: the exact payload again and an explicit confirmation, or why the write is unavailable. */
  @Get('contributions/:slug/confirm')
  @RateLimit('read')
  async confirmPage(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Query() query: VerifiedQueryDto,
  ): Promise<void> {
    await this.renderPreview(req, res, slug, query, 'confirm', 'Confirm write');
  }

  @Post('contributions/:slug/confirm')
  @RateLimit('write')
  async confirm(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Body() form: ConsoleConfirmDto,
  ): Promise<void> {
    const record = await this.saga.confirm(slug, consoleActor(req), verifiedValues(form));
    const written = record.status === 'contributed' && record.mapdb_element_id !== null;
    this.pages.redirect(
      req,
      res,
      this.base(slug),
      written
        ? {
            kind: 'notice',
            text: `Written to the map database: node ${record.mapdb_element_id} in changeset ${record.changeset_id}.`,
          }
        : {
            kind: 'error',
            text: `Not written: the contribution is ${record.status.replace(/_/g, ' ')}.`,
            details: [record.last_error_message].filter(Boolean),
          },
    );
  }

  @Post('contributions/:slug/reconcile')
  @RateLimit('write')
  async reconcile(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
  ): Promise<void> {
    const record = await this.reconciliation.reconcile(slug, consoleActor(req));
    this.pages.redirect(req, res, this.base(slug), {
      kind: 'notice',
      text: `Reconciled: the contribution is ${record.status.replace(/_/g, ' ')}.`,
    });
  }

  @Post('contributions/:slug/withdraw')
  @RateLimit('write')
  async withdraw(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Param('slug') slug: string,
    @Body() _form: ConsoleWithdrawDto,
  ): Promise<void> {
    await this.withdrawal.withdraw(slug, consoleActor(req));
    this.pages.redirect(req, res, this.base(slug), {
      kind: 'notice',
      text: 'Permission withdrawn: this library will never be contributed.',
    });
  }

  /** The preview and the confirmation page show the same dry run of the write with the same verification flags. */
  private async renderPreview(
    req: ConsoleRequest,
    res: Response,
    slug: string,
    query: VerifiedQueryDto,
    view: 'preview' | 'confirm',
    heading: string,
  ): Promise<void> {
    const verified = verifiedValues(query);
    const [record, { preview, confirmBlockers }] = await Promise.all([
      this.records.detail(slug),
      this.records.dryRun(slug, verified),
    ]);
    this.pages.render(req, res, view, {
      title: `${heading}: ${record.library.name || record.library.slug}`,
      section: 'contributions',
      record,
      preview,
      verified,
      // The confirm reruns the duplicate check itself, so a missing or stale check does not block it here.
      writeBlockers: confirmBlockers,
    });
  }

  private base(slug: string): string {
    return `/admin/contributions/${encodeURIComponent(slug)}`;
  }
}
