import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock.js';
import { ApiError } from '../common/errors/api-error.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import { AppConfig } from '../config/app-config.js';
import {
  formatCoordinate,
  MapApiClient,
  MapApiError,
  type MapApiCapabilities,
} from './adapters/map-api.client.js';
import { planBatches } from './domain/batching.js';
import { MapQueryClient, MapQueryError } from './adapters/map-query.client.js';
import {
  evaluateDuplicates,
  MalformedCandidateError,
  queryRadiusMeters,
} from './domain/duplicates.js';
import { evaluateEligibility } from './domain/eligibility.js';
import { transition } from './domain/state-machine.js';
import { changesetTags, nodeTags, previewWarnings } from './domain/tag-mapping.js';
import type {
  Blocker,
  ConfirmBatch,
  ContributionFacts,
  DuplicateEvaluation,
  LibraryFacts,
  MapCandidate,
  Tags,
  VerifiedValues,
  WriteGates,
} from './domain/types.js';
import type {
  BatchConfirmBatchDto,
  BatchConfirmResponse,
  ContributionEventDto,
  ContributionRecordResponse,
  HistoryEventResponse,
  PreviewResponse,
  ResolveDto,
} from './dto/map-contribution.dto.js';
import {
  MapContributionRepository,
  type ContributionLibraryRow,
  type ContributionRow,
  type EventRow,
  type HistoryFilter,
} from './map-contribution.repository.js';
import { WriteGatesService } from './write-gates.js';

export const MAP_QUERY_CLIENT = Symbol('MAP_QUERY_CLIENT');
export const MAP_API_CLIENT = Symbol('MAP_API_CLIENT');

export const SERVICE_NAME = 'bookcase-directory';
export const SERVICE_VERSION = '0.1.0';
const SOURCE_WORDING = 'survey; individually reviewed user submission (Bookcase Directory)';

type Actor = { id: number; username: string };

/** A `submitting` record whose write_started is older than this is taken as a crashed write (reconcilable). */
export const STUCK_WRITE_MS = 10 * 60 * 1000;

/** The check blockers a confirm clears itself by rerunning the check. */
export const CHECK_BLOCKERS: readonly string[] = ['check_missing', 'check_stale', 'check_failed'];

/** Exactly what a write sends: recorded in write_started before any outbound call. */
interface WritePayload {
  node: { lat: number; lon: number; tags: Tags };
  changeset_tags: Tags;
}

/** One library claimed for a write (status submitting, write_started recorded) with its own attempt key. */
interface WriteClaim {
  record: ContributionRow;
  payload: WritePayload;
  attemptKey: string;
}

/** A batch library that was never sent because an earlier call of its batch failed. */
class BatchAbortedError extends Error {
  constructor() {
    super('An earlier call of the batch failed; nothing was sent for this library.');
  }
}

const IN_FLIGHT: Blocker = {
  code: 'writes_disabled',
  message: 'Another map write is in flight; try again when it ends.',
};

export function libraryFacts(row: ContributionLibraryRow): LibraryFacts {
  return {
    id: row.id,
    status: row.status,
    submissionOrigin: row.submission_origin,
    createdBy: row.created_by,
    mapdbSubmissionAllowed: row.mapdb_submission_allowed,
    source: row.source,
    externalId: row.external_id,
    hasPendingChanges: row.pending_changes !== null,
    hasPendingPhoto: row.pending_photo !== null,
    name: row.name,
    address: row.address,
    lat: Number(row.lat),
    lng: Number(row.lng),
    capacity: row.capacity,
    isIndoor: row.is_indoor,
    isLit: row.is_lit,
    wheelchairAccessible: row.wheelchair_accessible,
    brand: row.brand,
    operator: row.operator,
    website: row.website,
    aiGeneratedFields: row.ai_generated_fields,
  };
}

function contributionFacts(record: ContributionRow | null): ContributionFacts {
  return {
    status: record?.status ?? 'unchecked',
    checkedAt: record?.checked_at ? new Date(record.checked_at) : null,
    lastCheckFailed: record?.last_check_failed ?? false,
    elementType: record?.mapdb_element_type ?? null,
    elementId:
      record?.mapdb_element_id === null || record?.mapdb_element_id === undefined
        ? null
        : Number(record.mapdb_element_id),
  };
}

/**
 * How long the map API's capabilities are trusted once read: the first write after that (a new operator session,
 * in practice) reads them again. A status other than `online` is never kept.
 */
export const CAPABILITIES_MAX_AGE_MS = 10 * 60 * 1000;

/** API statuses that allow no write (the capabilities' `<status api>`). */
const NO_WRITE_STATUSES: readonly string[] = ['readonly', 'offline'];

/** The statuses a duplicate check may run in (and move between). */
const CHECKABLE_STATUSES: readonly string[] = ['unchecked', 'no_match', 'possible_duplicate'];

function notCheckable(status: string): ApiError {
  return refused([
    { code: 'element_recorded', message: `The contribution is ${status}; no check applies.` },
  ]);
}

class QueryNotConfiguredError extends Error {
  constructor() {
    super('MAPDB_QUERY_URL is not configured.');
  }
}

/** 401 and 403 from the map API both mean the token may not write: writes stay off until it changes. */
function disablesWrites(error: unknown): boolean {
  return (
    error instanceof MapApiError && (error.code === 'unauthorized' || error.code === 'forbidden')
  );
}

/** The node position a write_started event recorded, or null when there is none. */
function startedPosition(
  details: Record<string, unknown> | undefined,
): { lat: number; lon: number } | null {
  const node = details?.node as { lat?: unknown; lon?: unknown } | undefined;
  if (typeof node?.lat !== 'number' || typeof node.lon !== 'number') return null;
  return { lat: node.lat, lon: node.lon };
}

function refused(
  blockers: Blocker[],
  message = 'The action is not allowed for this library now.',
): ApiError {
  return ApiError.conflict(message, { blockers });
}

/**
 * The staff-confirmed contribution of one reviewed, opted-in library to the map database as a single node. Only
 * the staff controller reaches this service; nothing runs on its own.
 */
@Injectable()
export class MapContributionService {
  private readonly logger = new Logger(MapContributionService.name);
  private capabilitiesRead: { value: MapApiCapabilities; at: number } | null = null;

  constructor(
    private readonly repository: MapContributionRepository,
    private readonly gates: WriteGatesService,
    @Inject(MAP_QUERY_CLIENT) private readonly queryClient: MapQueryClient | null,
    @Inject(MAP_API_CLIENT) private readonly apiClient: MapApiClient | null,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** The map API client; only reachable once the write gates (which need its settings) are open. */
  private get api(): MapApiClient {
    if (!this.apiClient)
      throw refused([{ code: 'writes_disabled', message: 'The map API is not configured.' }]);
    return this.apiClient;
  }

  private blockers(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    gates: WriteGates,
  ): Blocker[] {
    const blockers = evaluateEligibility(
      libraryFacts(library),
      contributionFacts(record),
      gates,
      this.clock.date(),
      this.config.mapdb.duplicateCheckMaxAgeSeconds,
    );
    // Every changeset names the published plan: without MAPDB_PLAN_URL nothing may be written.
    if (!this.config.mapdb.planUrl && !blockers.some((b) => b.code === 'writes_disabled')) {
      blockers.push({
        code: 'writes_disabled',
        message: 'Writes to the map database are disabled: MAPDB_PLAN_URL is not configured.',
      });
    }
    return blockers;
  }

  /**
   * The map API's capabilities for a write: read (GET /api/0.6/capabilities) when none were read within
   * CAPABILITIES_MAX_AGE_MS (or `fresh`), otherwise the kept ones. Unreadable capabilities, or an API that reports itself
   * `readonly` or `offline`, refuse the write (409 `writes_disabled`) before anything is sent.
   */
  private async writeCapabilities(fresh = false): Promise<MapApiCapabilities> {
    const now = this.clock.now();
    const kept = this.capabilitiesRead;
    if (!fresh && kept && now - kept.at < CAPABILITIES_MAX_AGE_MS) return kept.value;
    this.capabilitiesRead = null;
    let capabilities: MapApiCapabilities;
    try {
      capabilities = await this.api.capabilities();
    } catch (error) {
      if (error instanceof MapApiError && disablesWrites(error))
        await this.gates.disable(`http_${error.status ?? 401}`);
      throw refused([
        {
          code: 'writes_disabled',
          message: 'The map API capabilities could not be read; nothing was written.',
        },
      ]);
    }
    const status = capabilities.status.api ?? 'online';
    if (NO_WRITE_STATUSES.includes(status)) {
      throw refused([
        {
          code: 'writes_disabled',
          message: `The map API reports its status as ${status}: it accepts no writes now; nothing was written.`,
        },
      ]);
    }
    this.capabilitiesRead = { value: capabilities, at: now };
    return capabilities;
  }

  async list(
    query: PaginationQueryDto & { status?: string; eligible?: boolean },
  ): Promise<Page<ContributionRecordResponse>> {
    const gates = await this.gates.current();
    const rows = (await this.repository.findCandidates())
      .map(({ library, record }) => ({
        library,
        record,
        blockers: this.blockers(library, record, gates),
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
            .map(({ library, record, blockers }) => this.toResponse(library, record, blockers, [])),
        ),
    );
  }

  async detail(slug: string): Promise<ContributionRecordResponse> {
    await this.confirmPermissionsIfDue();
    const library = await this.library(slug);
    const record = await this.repository.findRecord(library.id);
    const gates = await this.gates.current();
    const events = record ? await this.repository.events(record.id) : [];
    return this.toResponse(library, record, this.blockers(library, record, gates), events);
  }

  /** Why the duplicate check cannot run (no MAPDB_QUERY_URL), or null when it can. */
  duplicateCheckUnavailable(): string | null {
    return this.queryClient
      ? null
      : 'The duplicate check is unavailable: MAPDB_QUERY_URL is not configured.';
  }

  /** Every recorded event of every library (or of one staff member, one library), newest first. */
  auditHistory(
    query: PaginationQueryDto,
    filter: HistoryFilter = {},
  ): Promise<Page<HistoryEventResponse>> {
    return paginate(
      query,
      () => this.repository.countAllEvents(filter),
      async (limit, offset) =>
        (await this.repository.allEvents(limit, offset, filter)).map((event) => ({
          ...eventResponse(event),
          library:
            event.library_slug !== null
              ? { slug: event.library_slug, name: event.library_name ?? '' }
              : null,
        })),
    );
  }

  /** Runs the duplicate check against current map data and records its outcome. */
  async check(slug: string, actor: Actor): Promise<ContributionRecordResponse> {
    const library = await this.library(slug);
    await this.runCheck(library, actor);
    return this.detail(slug);
  }

  private async runCheck(
    library: ContributionLibraryRow,
    actor: Actor,
  ): Promise<DuplicateEvaluation | null> {
    const record = await this.repository.record(library.id);
    if (!CHECKABLE_STATUSES.includes(record.status)) throw notCheckable(record.status);
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
    // The outcome is evaluated and stored under the record's lock, against the record as it is now: a write may
    // have claimed it (or staff resolved a candidate) while the query was in flight. A check never moves a record
    // out of submitting, contributed, failed or already_present.
    return this.repository.transaction(async (manager) => {
      const current = await this.repository.record(library.id, manager, true);
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
              linkedElements: await this.repository.linkedElements(library.id, manager),
              resolvedDifferent: new Set(current.resolved_different),
            },
          );
        } catch (error) {
          failure = this.checkFailure(error);
        }
      }
      if (!evaluation) {
        const { code, message } = failure ?? this.checkFailure(null);
        await this.repository.update(manager, current.id, {
          last_check_failed: true,
          last_error_code: code,
          last_error_message: message,
        });
        await this.repository.addEvent(manager, current, {
          type: 'duplicate_check',
          outcome: 'failed',
          actor,
          details: { error_code: code },
        });
        return null;
      }
      await this.repository.update(manager, current.id, {
        status: transition(current.status, evaluation.blocking ? 'check_blocked' : 'check_passed'),
        checked_at: this.clock.date(),
        last_check_failed: false,
        duplicate_candidates: evaluation.candidates,
        last_error_code: '',
        last_error_message: '',
      });
      await this.repository.addEvent(manager, current, {
        type: 'duplicate_check',
        outcome: evaluation.blocking ? 'possible_duplicate' : 'no_match',
        actor,
        details: { candidates: evaluation.candidates, warnings: evaluation.warnings },
      });
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

  async resolve(slug: string, actor: Actor, dto: ResolveDto): Promise<ContributionRecordResponse> {
    const library = await this.library(slug);
    await this.repository.transaction(async (manager) => {
      const record = await this.repository.record(library.id, manager, true);
      if (record.status !== 'possible_duplicate') {
        throw refused([
          { code: 'possible_duplicate', message: 'Only a possible duplicate can be resolved.' },
        ]);
      }
      const details: Record<string, unknown> = { outcome: dto.outcome, reason: dto.reason };
      if (dto.outcome === 'same_feature') {
        if (!dto.element_type || !dto.element_id) {
          throw ApiError.badRequest('element_type and element_id are required for same_feature.');
        }
        details.element = `${dto.element_type}/${dto.element_id}`;
        await this.repository.update(manager, record.id, {
          status: transition(record.status, 'resolved_same_feature'),
          mapdb_element_type: dto.element_type,
          mapdb_element_id: dto.element_id,
        });
      } else if (dto.outcome === 'different_feature') {
        const keys = new Set(record.resolved_different);
        const named = dto.element_id !== undefined || dto.element_type !== undefined;
        const chosen = record.duplicate_candidates.filter(
          (candidate) =>
            !named || (candidate.type === dto.element_type && candidate.id === dto.element_id),
        );
        // A named element must be one the check found: a typo must not look like a recorded resolution.
        if (named && chosen.length === 0) {
          throw ApiError.badRequest(
            `${dto.element_type ?? '?'}/${dto.element_id ?? '?'} is not among the duplicate candidates.`,
          );
        }
        for (const candidate of chosen) keys.add(`${candidate.type}/${candidate.id}`);
        details.elements = [...keys];
        await this.repository.update(manager, record.id, {
          status: transition(record.status, 'resolved_different_feature'),
          resolved_different: [...keys],
        });
      } else {
        transition(record.status, 'resolved_unclear');
      }
      await this.repository.addEvent(manager, record, {
        type: 'duplicate_resolution',
        outcome: dto.outcome,
        actor,
        details,
      });
    });
    return this.detail(slug);
  }

  /**
   * The API's preview: "a library can be previewed only when all hold", so an ineligible one is refused (409 with
   * the record's blockers) and its tags are not rendered.
   */
  async preview(slug: string, verified: VerifiedValues): Promise<PreviewResponse> {
    const { library, record, blockers } = await this.previewFacts(slug);
    if (blockers.length)
      throw refused(blockers, 'This library cannot be previewed: not every condition holds.');
    return this.previewOf(library, record, blockers, verified);
  }

  /**
   * The dry run of a write, eligible or not: the staff console's preview and confirmation pages show it beside the
   * failing conditions (their confirm button stays disabled while any blocks the write).
   */
  async dryRun(slug: string, verified: VerifiedValues): Promise<PreviewResponse> {
    const { library, record, blockers } = await this.previewFacts(slug);
    return this.previewOf(library, record, blockers, verified);
  }

  private async previewFacts(slug: string) {
    await this.confirmPermissionsIfDue();
    const library = await this.library(slug);
    const record = await this.repository.findRecord(library.id);
    return {
      library,
      record,
      blockers: this.blockers(library, record, await this.gates.current()),
    };
  }

  private previewOf(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    blockers: Blocker[],
    verified: VerifiedValues,
  ): PreviewResponse {
    return {
      eligible: blockers.length === 0,
      blockers,
      warnings: this.warnings(library, record, verified),
      node: {
        lat: Number(library.lat),
        lon: Number(library.lng),
        tags: nodeTags(libraryFacts(library), verified),
      },
      // A dry preview renders even when the changeset metadata is not configured (writes are blocked then).
      changeset_tags: this.config.mapdb.planUrl ? this.changesetTags(library, 1) : {},
    };
  }

  /**
   * The confirmed write, in the spec's order: fresh check; re-read and re-evaluate under a lock; write_started
   * with the exact payload and status submitting; changeset (id persisted at once); node (id persisted); close;
   * success. Ambiguous outcomes end in `failed` and need reconciliation; nothing is ever retried automatically.
   */
  async confirm(
    slug: string,
    actor: Actor,
    verified: VerifiedValues,
  ): Promise<ContributionRecordResponse> {
    await this.confirmPermissionsIfDue();
    const gatesBefore = await this.gates.current();
    const library = await this.library(slug);
    const before = await this.repository.findRecord(library.id);
    const early = this.blockers(library, before, gatesBefore).filter(
      (b) => !CHECK_BLOCKERS.includes(b.code),
    );
    if (early.length) throw refused(early);
    // The client obligation: capabilities (status, element limits) are read before writing, never assumed.
    if ((await this.writeCapabilities()).changesetMaximumElements < 1)
      throw refused([
        { code: 'writes_disabled', message: 'The map API allows no element per changeset.' },
      ]);

    await this.runCheck(library, actor);

    const attemptKey = randomUUID();
    const claim = await this.repository.transaction(async (manager) => {
      await this.repository.lockWrites(manager);
      const locked = await this.repository.findLibrary(slug, manager, true);
      if (!locked) throw ApiError.notFound();
      const record = await this.repository.record(locked.id, manager, true);
      const blockers = this.blockers(locked, record, await this.gates.current(manager));
      if (blockers.length) throw refused(blockers);
      if (await this.repository.anySubmitting(manager)) throw refused([IN_FLIGHT]);
      const payload = this.writePayload(locked, verified, this.changesetTags(locked, 1));
      return this.startWrite(manager, record, payload, attemptKey, actor);
    });

    await this.performWrite([claim], actor);
    return this.detail(slug);
  }

  private writePayload(
    library: ContributionLibraryRow,
    verified: VerifiedValues,
    changesetTags: Tags,
  ): WritePayload {
    return {
      node: {
        lat: Number(library.lat),
        lon: Number(library.lng),
        tags: nodeTags(libraryFacts(library), verified),
      },
      changeset_tags: changesetTags,
    };
  }

  /** Step (2) of the write order, inside the caller's locked transaction: write_started, then submitting. */
  private async startWrite(
    manager: EntityManager,
    record: ContributionRow,
    payload: WritePayload,
    attemptKey: string,
    actor: Actor,
  ): Promise<WriteClaim> {
    await this.repository.update(manager, record.id, {
      status: transition(record.status, 'write_started'),
      last_attempt_key: attemptKey,
      last_error_code: '',
      last_error_message: '',
    });
    await this.repository.addEvent(manager, record, {
      type: 'write_started',
      outcome: 'started',
      actor,
      attemptKey,
      details: { ...payload },
      // The injected clock's time: crash recovery ages a stuck `submitting` record by it.
      at: this.clock.date(),
    });
    return { record, payload, attemptKey };
  }

  /**
   * Steps (3)–(6) for claims sharing one changeset (a single confirm is a batch of one): create the changeset and
   * persist its id; create each node in order and persist its id at once; close; record success. The first failure
   * stops the batch: nothing is retried and no later node is sent. When no node is known the changeset is left for
   * reconciliation; otherwise it is closed so the known nodes count as contributed. Every library without a
   * confirmed, closed node ends `failed` (known ids kept) and needs reconciliation.
   */
  private async performWrite(
    claims: WriteClaim[],
    actor: Actor,
  ): Promise<{ changesetId: number | null; failed: boolean }> {
    let changesetId: number | null = null;
    const created = new Map<WriteClaim, number>();
    let failure: { error: unknown } | null = null;
    try {
      changesetId = await this.api.createChangeset(claims[0].payload.changeset_tags);
      const id = changesetId;
      await this.repository.transaction(async (manager) => {
        for (const claim of claims) {
          await this.repository.update(manager, claim.record.id, { changeset_id: id });
        }
      });
      for (const claim of claims) {
        const { lat, lon, tags } = claim.payload.node;
        const nodeId = await this.api.createNode(id, lat, lon, tags);
        await this.repository.update(undefined, claim.record.id, {
          mapdb_element_type: 'node',
          mapdb_element_id: nodeId,
        });
        created.set(claim, nodeId);
      }
    } catch (error) {
      failure = { error };
    }

    let closeFailure: { error: unknown } | null = null;
    if (changesetId !== null && created.size > 0) {
      try {
        await this.api.closeChangeset(changesetId);
      } catch (error) {
        closeFailure = { error };
      }
    }

    let firstUnsent = true;
    for (const claim of claims) {
      const nodeId = created.get(claim);
      if (nodeId !== undefined && closeFailure) {
        // The node exists: keep its id and reconcile the changeset instead of creating another node.
        await this.fail(claim.record, claim.attemptKey, actor, closeFailure.error, {
          changeset_id: changesetId,
          node_id: nodeId,
          step: 'close',
        });
      } else if (nodeId !== undefined) {
        await this.succeed(claim, actor, nodeId, changesetId as number);
      } else {
        // The changeset create failed for every claim alike; otherwise the first claim without a node met the
        // failure and the rest were never sent.
        const error =
          changesetId === null || firstUnsent ? failure?.error : new BatchAbortedError();
        firstUnsent = false;
        await this.fail(claim.record, claim.attemptKey, actor, error, {
          changeset_id: changesetId,
        });
      }
    }
    return { changesetId, failed: failure !== null || closeFailure !== null };
  }

  private async succeed(
    claim: WriteClaim,
    actor: Actor,
    nodeId: number,
    changesetId: number,
  ): Promise<void> {
    await this.repository.transaction(async (manager) => {
      await this.repository.update(manager, claim.record.id, {
        status: transition('submitting', 'write_succeeded'),
        contributed_at: this.clock.date(),
        contributed_by: actor.id,
      });
      await this.repository.addEvent(manager, claim.record, {
        type: 'write_succeeded',
        outcome: 'contributed',
        actor,
        attemptKey: claim.attemptKey,
        details: { element: `node/${nodeId}`, changeset_id: changesetId },
      });
    });
  }

  /**
   * POST /batch-confirm: the capabilities are read once (a changeset never holds more libraries than the server's
   * element limit), the libraries are planned into same-area batches, and each batch in turn is confirmed as the
   * single confirm does, with one changeset per batch. The first failed batch stops the request: later batches are
   * reported untouched (blocker `writes_disabled`) so staff reconcile before anything else is written.
   */
  async batchConfirm(
    slugs: string[],
    actor: Actor,
    verified: VerifiedValues,
  ): Promise<BatchConfirmResponse> {
    await this.confirmPermissionsIfDue();
    const libraries: ContributionLibraryRow[] = [];
    for (const slug of slugs) libraries.push(await this.library(slug));
    const closed = this.blockers(libraries[0], null, await this.gates.current()).filter(
      (blocker) => blocker.code === 'writes_disabled',
    );
    if (closed.length) throw refused(closed);

    // A batch is a write session of its own: its element limit is read fresh.
    const maxElements = (await this.writeCapabilities(true)).changesetMaximumElements;
    const plan = planBatches(
      libraries.map((library) => ({
        slug: library.slug,
        lat: Number(library.lat),
        lng: Number(library.lng),
        city: library.city,
        country: library.country,
      })),
      {
        maxSpanMeters: this.config.mapdb.batchMaxSpanMeters,
        maxSize: Math.min(this.config.mapdb.batchMaxSize, maxElements),
      },
    );

    const batches: BatchConfirmBatchDto[] = [];
    let halted = false;
    for (const batch of plan) {
      if (halted) {
        const blocked = new Map<string, Blocker[]>(
          batch.items.map((item) => [
            item.slug,
            [
              {
                code: 'writes_disabled',
                message:
                  'An earlier batch of this request failed; nothing was written for this library.',
              },
            ],
          ]),
        );
        batches.push(await this.batchResult(batch, null, blocked));
        continue;
      }
      const { result, failed } = await this.confirmBatch(batch, actor, verified);
      batches.push(result);
      halted = failed;
    }
    return { batches };
  }

  private async confirmBatch(
    batch: ConfirmBatch,
    actor: Actor,
    verified: VerifiedValues,
  ): Promise<{ result: BatchConfirmBatchDto; failed: boolean }> {
    const blocked = new Map<string, Blocker[]>();
    const gatesBefore = await this.gates.current();
    for (const item of batch.items) {
      const library = await this.library(item.slug);
      const early = this.blockers(
        library,
        await this.repository.findRecord(library.id),
        gatesBefore,
      ).filter((b) => !CHECK_BLOCKERS.includes(b.code));
      if (early.length) {
        blocked.set(item.slug, early);
        continue;
      }
      try {
        await this.runCheck(library, actor);
      } catch (error) {
        const blockers = error instanceof ApiError ? error.details?.blockers : undefined;
        if (!Array.isArray(blockers)) throw error;
        blocked.set(item.slug, blockers as Blocker[]);
      }
    }

    const claims = await this.repository.transaction(async (manager) => {
      await this.repository.lockWrites(manager);
      const gates = await this.gates.current(manager);
      const inFlight = await this.repository.anySubmitting(manager);
      const ready: { locked: ContributionLibraryRow; record: ContributionRow }[] = [];
      for (const item of batch.items) {
        if (blocked.has(item.slug)) continue;
        const locked = await this.repository.findLibrary(item.slug, manager, true);
        if (!locked) {
          blocked.set(item.slug, [{ code: 'not_approved', message: 'The library is gone.' }]);
          continue;
        }
        const record = await this.repository.record(locked.id, manager, true);
        const blockers = this.blockers(locked, record, gates);
        if (!blockers.length && inFlight) blockers.push(IN_FLIGHT);
        if (blockers.length) blocked.set(item.slug, blockers);
        else ready.push({ locked, record });
      }
      if (!ready.length) return [];
      const tags = this.changesetTags(ready[0].locked, ready.length);
      const started: WriteClaim[] = [];
      for (const { locked, record } of ready) {
        const payload = this.writePayload(locked, verified, tags);
        started.push(await this.startWrite(manager, record, payload, randomUUID(), actor));
      }
      return started;
    });

    if (!claims.length)
      return { result: await this.batchResult(batch, null, blocked), failed: false };
    const { changesetId, failed } = await this.performWrite(claims, actor);
    return { result: await this.batchResult(batch, changesetId, blocked), failed };
  }

  private async batchResult(
    batch: ConfirmBatch,
    changesetId: number | null,
    blocked: Map<string, Blocker[]>,
  ): Promise<BatchConfirmBatchDto> {
    const items: BatchConfirmBatchDto['items'] = [];
    for (const item of batch.items) {
      const library = await this.library(item.slug);
      const record = await this.repository.findRecord(library.id);
      items.push({
        slug: item.slug,
        status: record?.status ?? 'unchecked',
        mapdb_element_id:
          record?.mapdb_element_id === null || record?.mapdb_element_id === undefined
            ? null
            : Number(record.mapdb_element_id),
        blockers: blocked.get(item.slug) ?? [],
      });
    }
    return { city: batch.city, country: batch.country, changeset_id: changesetId, items };
  }

  private async fail(
    record: ContributionRow,
    attemptKey: string,
    actor: Actor,
    error: unknown,
    known: Record<string, unknown>,
  ): Promise<void> {
    const aborted = error instanceof BatchAbortedError;
    const code =
      error instanceof MapApiError
        ? `write_${error.code}`
        : aborted
          ? 'write_batch_aborted'
          : 'write_error';
    const message =
      error instanceof MapApiError || aborted ? error.message : 'The map write failed.';
    if (disablesWrites(error))
      await this.gates.disable(`http_${(error as MapApiError).status ?? 401}`);
    if (!(error instanceof MapApiError) && !aborted)
      this.logger.error(`map write failed: ${(error as Error | undefined)?.message ?? 'unknown'}`);
    await this.repository.transaction(async (manager) => {
      await this.repository.update(manager, record.id, {
        status: transition('submitting', 'write_failed'),
        last_error_code: code,
        last_error_message: message,
      });
      await this.repository.addEvent(manager, record, {
        type: 'write_failed',
        outcome: 'reconcile_required',
        actor,
        attemptKey,
        details: { error_code: code, ...known },
      });
    });
  }

  /**
   * Only for a failed record: finds out what the recorded changeset holds; never creates anything. The record stays
   * locked (NOWAIT: a concurrent reconciliation is refused at once) until the outcome is stored, so two
   * reconciliations can never both act on one changeset.
   */
  async reconcile(slug: string, actor: Actor): Promise<ContributionRecordResponse> {
    const library = await this.library(slug);
    // Recorded after the transaction: the write state is read and saved on a connection of its own.
    let disableReason: string | null = null;
    const outcome = await this.repository.transaction(async (manager) => {
      const record = await this.repository.lockRecordNoWait(library.id, manager);
      if (record === 'locked') {
        throw refused([
          {
            code: 'writes_disabled',
            message:
              'A reconciliation of this library is already in progress; try again when it ends.',
          },
        ]);
      }
      if (!record || (record.status !== 'failed' && record.status !== 'submitting')) {
        throw refused([
          { code: 'element_recorded', message: 'Only a failed contribution can be reconciled.' },
        ]);
      }
      const started = await this.repository.lastWriteStarted(record.id, manager);
      if (record.status === 'submitting') {
        // Crash recovery: a write that has not ended within STUCK_WRITE_MS is taken as dead. A younger one may
        // still be in flight and is left alone.
        const age = started
          ? this.clock.now() - new Date(started.created_at).getTime()
          : Number.POSITIVE_INFINITY;
        if (!(age > STUCK_WRITE_MS)) {
          throw refused([
            {
              code: 'writes_disabled',
              message:
                'The write of this library may still be in flight; a submitting record can be reconciled ' +
                `${STUCK_WRITE_MS / 60_000} minutes after its write started.`,
            },
          ]);
        }
      }
      const target = startedPosition(started?.details);
      const changesetId = record.changeset_id === null ? null : Number(record.changeset_id);
      let found: { id: number } | null = null;
      let open = false;
      if (changesetId !== null) {
        try {
          const download = await this.api.downloadChangeset(changesetId);
          open = download.open;
          // A batch changeset holds several libraries' nodes: this library's is the one at the exact position its
          // write_started recorded, and never one already linked to another library.
          const linked = await this.repository.linkedElements(library.id, manager);
          found =
            download.created.find(
              (element) =>
                element.type === 'node' &&
                element.tags.amenity === 'public_bookcase' &&
                !linked.has(`node/${element.id}`) &&
                (target === null ||
                  (element.lat !== null &&
                    element.lon !== null &&
                    formatCoordinate(element.lat) === formatCoordinate(target.lat) &&
                    formatCoordinate(element.lon) === formatCoordinate(target.lon))),
            ) ?? null;
          if (open) await this.api.closeChangeset(changesetId);
        } catch (error) {
          const code = error instanceof MapApiError ? `reconcile_${error.code}` : 'reconcile_error';
          if (disablesWrites(error)) disableReason = `http_${(error as MapApiError).status ?? 401}`;
          await this.repository.update(manager, record.id, {
            last_error_code: code,
            last_error_message: 'Reconciliation could not read the changeset.',
          });
          await this.repository.addEvent(manager, record, {
            type: 'reconciliation',
            outcome: 'failed',
            actor,
            details: { error_code: code },
          });
          return 'unreadable' as const;
        }
      }
      if (found) {
        await this.repository.update(manager, record.id, {
          status: transition(record.status, 'reconciled_found'),
          mapdb_element_type: 'node',
          mapdb_element_id: found.id,
          contributed_at: this.clock.date(),
          contributed_by: actor.id,
          last_error_code: '',
          last_error_message: '',
        });
      } else {
        await this.repository.update(manager, record.id, {
          status: transition(record.status, 'reconciled_absent'),
          mapdb_element_type: null,
          mapdb_element_id: null,
          changeset_id: null,
          checked_at: null,
          duplicate_candidates: [],
        });
      }
      await this.repository.addEvent(manager, record, {
        type: 'reconciliation',
        outcome: found ? 'contributed' : 'nothing_created',
        actor,
        details: {
          changeset_id: changesetId,
          element: found ? `node/${found.id}` : null,
          closed_changeset: open,
        },
      });
      return 'reconciled' as const;
    });
    if (disableReason) await this.gates.disable(disableReason);
    if (outcome === 'unreadable') {
      throw refused([
        { code: 'check_failed', message: 'The changeset could not be read; try again later.' },
      ]);
    }
    return this.detail(slug);
  }

  /** Staff withdrawal of the submitter's permission: true → false only. */
  async withdraw(slug: string, actor: Actor): Promise<ContributionRecordResponse> {
    const library = await this.library(slug);
    await this.repository.transaction(async (manager) => {
      // Library row first, then the record: the write claim takes them in that order, so a withdrawal racing a
      // confirm waits for it instead of deadlocking.
      await this.repository.findLibrary(slug, manager, true);
      const record = await this.repository.record(library.id, manager, true);
      if (!(await this.repository.withdrawPermission(manager, library.id))) {
        throw ApiError.badRequest(
          'The map submission permission is already withdrawn (or was never given).',
        );
      }
      await this.repository.addEvent(manager, record, {
        type: 'permission_withdrawal',
        outcome: 'withdrawn',
        actor,
      });
    });
    return this.detail(slug);
  }

  private async confirmPermissionsIfDue(): Promise<void> {
    if (!(await this.gates.permissionsDue())) return;
    try {
      const { allowWriteApi } = await this.api.permissions();
      await this.gates.recordPermissions(allowWriteApi);
    } catch (error) {
      if (disablesWrites(error))
        await this.gates.disable(`http_${(error as MapApiError).status ?? 401}`);
    }
  }

  private changesetTags(library: ContributionLibraryRow, count: number): Tags {
    if (!this.config.mapdb.planUrl) return {};
    return changesetTags({
      comment: `Add ${count} reviewed public bookcase${count === 1 ? '' : 's'} in ${library.city}, ${library.country}`,
      createdBy: `${SERVICE_NAME}/${SERVICE_VERSION}`,
      source: SOURCE_WORDING,
      planUrl: this.config.mapdb.planUrl ?? '',
      reviewRequested: true,
    });
  }

  /**
   * Nearby features that do not block (no signal, or resolved by staff as a different feature: both still need a
   * look at the map), then why a library value is left out of the tags.
   */
  private warnings(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    verified: VerifiedValues,
  ): string[] {
    const mapping = previewWarnings(libraryFacts(library), verified);
    if (!record || record.status === 'unchecked') {
      return ['No duplicate check has run yet.', ...mapping];
    }
    const nearby = record.duplicate_candidates
      .filter((candidate) => candidate.signals.length === 0 || candidate.resolved_different)
      .map((candidate) => {
        const where = `${candidate.type}/${candidate.id} at ${Math.round(candidate.distance_m)} m`;
        return candidate.resolved_different
          ? `Nearby ${where} was resolved as a different feature: inspect it on the map.`
          : `Nearby ${where}: inspect it on the map.`;
      });
    return [...nearby, ...mapping];
  }

  private async library(slug: string): Promise<ContributionLibraryRow> {
    const library = await this.repository.findLibrary(slug);
    if (!library) throw ApiError.notFound();
    return library;
  }

  private toResponse(
    library: ContributionLibraryRow,
    record: ContributionRow | null,
    blockers: Blocker[],
    events: EventRow[],
  ): ContributionRecordResponse {
    return {
      library: {
        id: library.id,
        slug: library.slug,
        name: library.name,
        city: library.city,
        country: library.country,
        status: library.status,
        mapdb_submission_allowed: library.mapdb_submission_allowed,
      },
      status: record?.status ?? 'unchecked',
      checked_at: record?.checked_at ? new Date(record.checked_at).toISOString() : null,
      duplicate_candidates: record?.duplicate_candidates ?? [],
      mapdb_element_type: record?.mapdb_element_type ?? null,
      mapdb_element_id:
        record?.mapdb_element_id === null || record?.mapdb_element_id === undefined
          ? null
          : Number(record.mapdb_element_id),
      changeset_id:
        record?.changeset_id === null || record?.changeset_id === undefined
          ? null
          : Number(record.changeset_id),
      contributed_at: record?.contributed_at ? new Date(record.contributed_at).toISOString() : null,
      contributed_by:
        record?.contributed_by && record.contributed_by_username
          ? { id: record.contributed_by, username: record.contributed_by_username }
          : null,
      last_attempt_key: record?.last_attempt_key ?? null,
      last_error_code: record?.last_error_code ?? '',
      last_error_message: record?.last_error_message ?? '',
      eligible: blockers.length === 0,
      blockers,
      events: events.map(eventResponse),
    };
  }
}

function eventResponse(event: EventRow): ContributionEventDto {
  return {
    type: event.event_type,
    outcome: event.outcome,
    actor:
      event.actor_id !== null && event.actor_username
        ? { id: event.actor_id, username: event.actor_username }
        : null,
    attempt_key: event.attempt_key,
    details: event.details,
    created_at: new Date(event.created_at).toISOString(),
  };
}
