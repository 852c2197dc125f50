import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors/domain-errors.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import { AppConfig } from '../config/app-config.js';
import {
  ContributionHistoryRepository,
  type HistoryFilter,
} from './contribution-history.repository.js';
import type {
  ContributionLibraryRow,
  ContributionRow,
  LibraryWithRecord,
} from './contribution-rows.js';
import { toHistoryEventResponse, toPreview, toRecordResponse } from './contribution.mapper.js';
import { ContributionRefused } from './domain/refusal.js';
import type { Blocker, VerifiedValues, WriteGates } from './domain/types.js';
import { blockersBeforeCheck } from './domain/write-gates.js';
import type {
  ContributionRecordResponse,
  HistoryEventResponse,
  PreviewResponse,
} from './dto/map-contribution.dto.js';
import { MapContributionRepository } from './map-contribution.repository.js';
import { WriteGatesService } from './write-gates.service.js';

/** The console's dry run: the preview, and the blockers that keep its confirm button disabled. */
export interface DryRun {
  preview: PreviewResponse;
  /** The blockers a confirm would be refused for (a missing or stale check it reruns itself does not count). */
  confirmBlockers: Blocker[];
}

/**
 * Reading contribution records: the list, one record with its history, the preview, the whole audit history. Reads
 * never write (a library without a record is shown as `unchecked`); the other use cases answer through `view`.
 */
@Injectable()
export class ContributionRecordsService {
  constructor(
    private readonly repository: MapContributionRepository,
    private readonly history: ContributionHistoryRepository,
    private readonly gates: WriteGatesService,
    private readonly config: AppConfig,
  ) {}

  /** A library and its record, read once, or 404. */
  async load(slug: string): Promise<LibraryWithRecord> {
    const found = await this.repository.findLibraryWithRecord(slug);
    if (!found) throw new NotFoundError();
    return found;
  }

  async list(
    query: PaginationQueryDto & { status?: string; eligible?: boolean },
  ): Promise<Page<ContributionRecordResponse>> {
    const gates = await this.gates.current();
    const rows = (await this.repository.findCandidates())
      .map(({ library, record }) => ({
        library,
        record,
        blockers: this.gates.blockers(library, record, gates),
      }))
      .filter(({ record, blockers }) => {
        if (query.status && (record?.status ?? 'unchecked') !== query.status) return false;
        if (query.eligible !== undefined && (blockers.length === 0) !== query.eligible)
          return false;
        return true;
      });
    return paginate(
      query,
      () => Promise.resolve(rows.length),
      (limit, offset) =>
        Promise.resolve(
          rows
            .slice(offset, offset + limit)
            .map(({ library, record, blockers }) =>
              toRecordResponse(library, record, blockers, []),
            ),
        ),
    );
  }

  /** One record with every failing condition and its events (allow_write_api reconfirmed when due). */
  async detail(slug: string): Promise<ContributionRecordResponse> {
    const gates = await this.gates.refreshed();
    const { library, record } = await this.load(slug);
    return this.respond(library, record, gates);
  }

  /**
   * The record of an already loaded library as it is now, after an action changed it: the record and its events
   * are read again; the gates are the caller's when it holds them, else read (allow_write_api reconfirmed when due).
   */
  async view(
    library: ContributionLibraryRow,
    gates?: WriteGates,
  ): Promise<ContributionRecordResponse> {
    const record = await this.repository.findRecord(library.id);
    return this.respond(library, record, gates ?? (await this.gates.refreshed()));
  }

  private async respond(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    gates: WriteGates,
  ): Promise<ContributionRecordResponse> {
    const events = record ? await this.history.events(record.id) : [];
    return toRecordResponse(library, record, this.gates.blockers(library, record, gates), events);
  }

  /** Every recorded event of every library (or of one staff member, one library), newest first. */
  auditHistory(
    query: PaginationQueryDto,
    filter: HistoryFilter = {},
  ): Promise<Page<HistoryEventResponse>> {
    return paginate(
      query,
      () => this.history.countAllEvents(filter),
      async (limit, offset) =>
        (await this.history.allEvents(limit, offset, filter)).map(toHistoryEventResponse),
    );
  }

  /**
   * The API's preview: "a library can be previewed only when all hold", so an ineligible one is refused (409 with
   * the record's blockers) and its tags are not rendered.
   */
  async preview(slug: string, verified: VerifiedValues): Promise<PreviewResponse> {
    const { preview, blockers } = await this.previewOf(slug, verified);
    if (blockers.length) {
      throw new ContributionRefused(
        blockers,
        'This library cannot be previewed: not every condition holds.',
      );
    }
    return preview;
  }

  /**
   * The dry run of a write, eligible or not: the staff console's preview and confirmation pages show it beside the
   * failing conditions (their confirm button stays disabled while any blocks the write).
   */
  async dryRun(slug: string, verified: VerifiedValues): Promise<DryRun> {
    const { preview, blockers } = await this.previewOf(slug, verified);
    return { preview, confirmBlockers: blockersBeforeCheck(blockers) };
  }

  private async previewOf(
    slug: string,
    verified: VerifiedValues,
  ): Promise<{ preview: PreviewResponse; blockers: Blocker[] }> {
    const gates = await this.gates.refreshed();
    const { library, record } = await this.load(slug);
    const blockers = this.gates.blockers(library, record, gates);
    const preview = toPreview(library, record, blockers, verified, this.config.mapdb.planUrl);
    return { preview, blockers };
  }
}
