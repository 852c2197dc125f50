import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { RefusedError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import { MapQueryClient, MapQueryError } from './adapters/map-query.client.js';
import { ContributionRecordsService } from './contribution-records.service.js';
import type { ContributionLibraryRow, ContributionRow } from './contribution-rows.js';
import {
  evaluateDuplicates,
  MalformedCandidateError,
  queryRadiusMeters,
} from './domain/duplicates.js';
import { ContributionRefused } from './domain/refusal.js';
import { transition } from './domain/state-machine.js';
import type { DuplicateEvaluation, MapCandidate } from './domain/types.js';
import type { ContributionRecordResponse, ResolveDto } from './dto/map-contribution.dto.js';
import { ContributionTransitions } from './contribution-transitions.repository.js';
import { MapContributionRepository } from './map-contribution.repository.js';
import { MAP_QUERY_CLIENT } from './map-contribution.tokens.js';

type Actor = { id: number; username: string };

/** The statuses a duplicate check may run in (and move between). */
const CHECKABLE_STATUSES: readonly string[] = ['unchecked', 'no_match', 'possible_duplicate'];

function notCheckable(status: string): ContributionRefused {
  return new ContributionRefused([
    { code: 'element_recorded', message: `The contribution is ${status}; no check applies.` },
  ]);
}

class QueryNotConfiguredError extends Error {
  constructor() {
    super('MAPDB_QUERY_URL is not configured.');
  }
}

/**
 * The duplicate check against current map data (staff's own, and the one every confirm reruns) and staff's
 * resolution of a possible duplicate. The query runs outside any transaction; its outcome is stored under the
 * record's lock.
 */
@Injectable()
export class DuplicateCheckService {
  private readonly logger = new Logger(DuplicateCheckService.name);

  constructor(
    private readonly repository: MapContributionRepository,
    private readonly transitions: ContributionTransitions,
    private readonly records: ContributionRecordsService,
    @Inject(MAP_QUERY_CLIENT) private readonly queryClient: MapQueryClient | null,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Why the duplicate check cannot run (no MAPDB_QUERY_URL), or null when it can. */
  unavailable(): string | null {
    return this.queryClient
      ? null
      : 'The duplicate check is unavailable: MAPDB_QUERY_URL is not configured.';
  }

  /** Runs the duplicate check against current map data and records its outcome. */
  async check(slug: string, actor: Actor): Promise<ContributionRecordResponse> {
    const { library, record } = await this.records.load(slug);
    await this.run(library, record, actor);
    return this.records.view(library);
  }

  /**
   * One check of a loaded library: null when it could not complete (recorded as a failed check, which blocks
   * writes). The outcome is evaluated and stored under the record's lock, against the record as it is then: a write
   * may have claimed it (or staff resolved a candidate) while the query was in flight. A check never moves a record
   * out of submitting, contributed, failed or already_present.
   */
  async run(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    actor: Actor,
  ): Promise<DuplicateEvaluation | null> {
    if (record && !CHECKABLE_STATUSES.includes(record.status)) throw notCheckable(record.status);
    let candidates: MapCandidate[] | null = null;
    let failure: { code: string; message: string } | null = null;
    try {
      if (!this.queryClient) throw new QueryNotConfiguredError();
      candidates = await this.queryClient.findNear(
        Number(library.lat),
        Number(library.lng),
        queryRadiusMeters(this.config.mapdb.duplicateRadiusMeters),
      );
    } catch (error) {
      failure = this.checkFailure(error);
    }
    return this.repository.transaction(async (tx) => {
      const current = await this.repository.lockOrCreateRecord(tx, library.id);
      if (!CHECKABLE_STATUSES.includes(current.status)) throw notCheckable(current.status);
      let evaluation: DuplicateEvaluation | null = null;
      if (candidates) {
        try {
          evaluation = evaluateDuplicates(
            {
              name: library.name,
              address: library.address,
              brand: library.brand,
              operator: library.operator,
              lat: Number(library.lat),
              lng: Number(library.lng),
            },
            candidates,
            {
              radiusMeters: this.config.mapdb.duplicateRadiusMeters,
              linkedElements: await this.repository.linkedElements(library.id, tx),
              resolvedDifferent: new Set(current.resolved_different),
            },
          );
        } catch (error) {
          failure = this.checkFailure(error);
        }
      }
      if (!evaluation) {
        const { code, message } = failure ?? this.checkFailure(null);
        await this.transitions.recordCheckFailure(
          tx,
          current,
          { code, message },
          { type: 'duplicate_check', outcome: 'failed', actor, details: { error_code: code } },
        );
        return null;
      }
      await this.transitions.recordCheck(
        tx,
        current,
        {
          status: transition(
            current.status,
            evaluation.blocking ? 'check_blocked' : 'check_passed',
          ),
          checkedAt: this.clock.date(),
          candidates: evaluation.candidates,
        },
        {
          type: 'duplicate_check',
          outcome: evaluation.blocking ? 'possible_duplicate' : 'no_match',
          actor,
          details: { candidates: evaluation.candidates, warnings: evaluation.warnings },
        },
      );
      return evaluation;
    });
  }

  /** A stable, sanitized category and message for a failed check (never a body, URL or stack). */
  private checkFailure(error: unknown): { code: string; message: string } {
    if (error instanceof MapQueryError)
      return { code: `check_${error.code}`, message: error.message };
    if (error instanceof QueryNotConfiguredError) {
      return { code: 'check_not_configured', message: error.message };
    }
    if (error instanceof MalformedCandidateError) {
      return {
        code: 'check_malformed_response',
        message: 'The map query answered an unusable element.',
      };
    }
    if (error instanceof Error) this.logger.error(`duplicate check failed: ${error.name}`);
    return { code: 'check_error', message: 'The duplicate check failed.' };
  }

  /** Staff's resolution of a possible duplicate: same feature (linked), different feature, or unclear. */
  async resolve(slug: string, actor: Actor, dto: ResolveDto): Promise<ContributionRecordResponse> {
    const { library } = await this.records.load(slug);
    await this.repository.transaction(async (tx) => {
      const record = await this.repository.lockRecord(tx, library.id);
      if (record?.status !== 'possible_duplicate') {
        throw new ContributionRefused([
          { code: 'possible_duplicate', message: 'Only a possible duplicate can be resolved.' },
        ]);
      }
      const details: Record<string, unknown> = { outcome: dto.outcome, reason: dto.reason };
      const event = { type: 'duplicate_resolution', outcome: dto.outcome, actor, details };
      if (dto.outcome === 'same_feature') {
        if (!dto.element_type || !dto.element_id) {
          throw new RefusedError('element_type and element_id are required for same_feature.');
        }
        details.element = `${dto.element_type}/${dto.element_id}`;
        await this.transitions.markSameFeature(
          tx,
          record,
          transition(record.status, 'resolved_same_feature'),
          { type: dto.element_type, id: dto.element_id },
          event,
        );
      } else if (dto.outcome === 'different_feature') {
        const keys = new Set(record.resolved_different);
        const named = dto.element_id !== undefined || dto.element_type !== undefined;
        const chosen = record.duplicate_candidates.filter(
          (candidate) =>
            !named || (candidate.type === dto.element_type && candidate.id === dto.element_id),
        );
        // A named element must be one the check found: a typo must not look like a recorded resolution.
        if (named && chosen.length === 0) {
          throw new RefusedError(
            `${dto.element_type ?? '?'}/${dto.element_id ?? '?'} is not among the duplicate candidates.`,
          );
        }
        for (const candidate of chosen) keys.add(`${candidate.type}/${candidate.id}`);
        details.elements = [...keys];
        await this.transitions.markDifferentFeatures(
          tx,
          record,
          transition(record.status, 'resolved_different_feature'),
          [...keys],
          event,
        );
      } else {
        transition(record.status, 'resolved_unclear');
        await this.transitions.addEvent(tx, record, event);
      }
    });
    return this.records.view(library);
  }
}
