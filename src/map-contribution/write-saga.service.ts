import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import { ContributionRecordsService } from './contribution-records.service.js';
import type { ContributionLibraryRow, LibraryWithRecord } from './contribution-rows.js';
import { changesetTagsFor, elementIdOf, writePayload } from './contribution.mapper.js';
import { planBatches } from './domain/batching.js';
import { ContributionRefused, IN_FLIGHT } from './domain/refusal.js';
import type { Blocker, ConfirmBatch, VerifiedValues, WriteGates } from './domain/types.js';
import { blockersBeforeCheck, closedGates, elementLimitBlocker } from './domain/write-gates.js';
import type {
  BatchConfirmBatchDto,
  BatchConfirmResponse,
  ContributionRecordResponse,
} from './dto/map-contribution.dto.js';
import { DuplicateCheckService } from './duplicate-check.service.js';
import { MapContributionRepository } from './map-contribution.repository.js';
import { MapWriterService, type Actor, type WriteClaim } from './map-writer.service.js';
import { WriteGatesService } from './write-gates.service.js';

/**
 * The confirmed write of one library or of a batch, in the spec's order: fresh check; re-read and re-evaluate under
 * the write lock; write_started with the exact payload and status submitting; then the map calls after the claim
 * committed (MapWriterService). Ambiguous outcomes end in `failed` and need reconciliation; nothing is ever retried
 * automatically. Each library and record is loaded once up front and passed on; the claim re-reads them under lock
 * as the spec requires.
 */
@Injectable()
export class WriteSagaService {
  constructor(
    private readonly repository: MapContributionRepository,
    private readonly records: ContributionRecordsService,
    private readonly checks: DuplicateCheckService,
    private readonly writer: MapWriterService,
    private readonly gates: WriteGatesService,
    private readonly config: AppConfig,
  ) {}

  async confirm(
    slug: string,
    actor: Actor,
    verified: VerifiedValues,
  ): Promise<ContributionRecordResponse> {
    const gatesBefore = await this.gates.refreshed();
    const { library, record } = await this.records.load(slug);
    const early = blockersBeforeCheck(this.gates.blockers(library, record, gatesBefore));
    if (early.length) throw new ContributionRefused(early);
    // The client obligation: capabilities (status, element limits) are read before writing, never assumed.
    const noElement = elementLimitBlocker(
      (await this.gates.capabilities()).changesetMaximumElements,
    );
    if (noElement) throw new ContributionRefused([noElement]);

    await this.checks.run(library, record, actor);

    const attemptKey = randomUUID();
    const { claim, locked, gates } = await this.repository.transaction(async (tx) => {
      await this.repository.lockWrites(tx);
      const locked = await this.repository.findLibrary(slug, tx, true);
      if (!locked) throw new NotFoundError();
      const current = await this.repository.lockOrCreateRecord(tx, locked.id);
      const gates = await this.gates.current(tx);
      const blockers = this.gates.blockers(locked, current, gates);
      if (blockers.length) throw new ContributionRefused(blockers);
      if (await this.repository.anySubmitting(tx)) throw new ContributionRefused([IN_FLIGHT]);
      const payload = writePayload(locked, verified, this.changesetTags(locked, 1));
      const claim = await this.writer.claim(tx, current, payload, attemptKey, actor);
      return { claim, locked, gates };
    });

    const outcome = await this.writer.write([claim], actor);
    return this.records.view(locked, outcome.disabledGates ?? gates);
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
    const gates = await this.gates.refreshed();
    const loaded = await this.repository.findLibrariesWithRecords(slugs);
    if (loaded.length !== slugs.length) throw new NotFoundError();
    const closed = closedGates(this.gates.blockers(loaded[0].library, null, gates));
    if (closed.length) throw new ContributionRefused(closed);

    // A batch is a write session of its own: its element limit is read fresh.
    const maxElements = (await this.gates.capabilities(true)).changesetMaximumElements;
    const plan = planBatches(
      loaded.map(({ library }) => ({
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
    const bySlug = new Map(loaded.map((item) => [item.library.slug, item]));

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
        batches.push(await this.batchResult(batch, bySlug, null, blocked));
        continue;
      }
      const { result, failed } = await this.confirmBatch(batch, bySlug, actor, verified);
      batches.push(result);
      halted = failed;
    }
    return { batches };
  }

  private async confirmBatch(
    batch: ConfirmBatch,
    loaded: Map<string, LibraryWithRecord>,
    actor: Actor,
    verified: VerifiedValues,
  ): Promise<{ result: BatchConfirmBatchDto; failed: boolean }> {
    const blocked = new Map<string, Blocker[]>();
    const gatesBefore = await this.gates.current();
    for (const item of batch.items) {
      const { library, record } = loaded.get(item.slug)!;
      const early = blockersBeforeCheck(this.gates.blockers(library, record, gatesBefore));
      if (early.length) {
        blocked.set(item.slug, early);
        continue;
      }
      try {
        await this.checks.run(library, record, actor);
      } catch (error) {
        if (!(error instanceof ContributionRefused)) throw error;
        blocked.set(item.slug, error.blockers);
      }
    }

    const claims = await this.repository.transaction(async (tx) => {
      await this.repository.lockWrites(tx);
      const gates: WriteGates = await this.gates.current(tx);
      const inFlight = await this.repository.anySubmitting(tx);
      const ready: { locked: ContributionLibraryRow; record: WriteClaim['record'] }[] = [];
      for (const item of batch.items) {
        if (blocked.has(item.slug)) continue;
        const locked = await this.repository.findLibrary(item.slug, tx, true);
        if (!locked) {
          blocked.set(item.slug, [{ code: 'not_approved', message: 'The library is gone.' }]);
          continue;
        }
        const record = await this.repository.lockOrCreateRecord(tx, locked.id);
        const blockers = this.gates.blockers(locked, record, gates);
        if (!blockers.length && inFlight) blockers.push(IN_FLIGHT);
        if (blockers.length) blocked.set(item.slug, blockers);
        else ready.push({ locked, record });
      }
      if (!ready.length) return [];
      const tags = this.changesetTags(ready[0].locked, ready.length);
      const started: WriteClaim[] = [];
      for (const { locked, record } of ready) {
        const payload = writePayload(locked, verified, tags);
        started.push(await this.writer.claim(tx, record, payload, randomUUID(), actor));
      }
      return started;
    });

    if (!claims.length)
      return { result: await this.batchResult(batch, loaded, null, blocked), failed: false };
    const { changesetId, failed } = await this.writer.write(claims, actor);
    return { result: await this.batchResult(batch, loaded, changesetId, blocked), failed };
  }

  /** Each library of the batch as its record is now (one read for the whole batch). */
  private async batchResult(
    batch: ConfirmBatch,
    loaded: Map<string, LibraryWithRecord>,
    changesetId: number | null,
    blocked: Map<string, Blocker[]>,
  ): Promise<BatchConfirmBatchDto> {
    const ids = batch.items.map((item) => loaded.get(item.slug)!.library.id);
    const records = await this.repository.findRecords(ids);
    const items: BatchConfirmBatchDto['items'] = batch.items.map((item, index) => {
      const record = records.get(ids[index]);
      return {
        slug: item.slug,
        status: record?.status ?? 'unchecked',
        mapdb_element_id: elementIdOf(record),
        blockers: blocked.get(item.slug) ?? [],
      };
    });
    return { city: batch.city, country: batch.country, changeset_id: changesetId, items };
  }

  private changesetTags(library: ContributionLibraryRow, count: number) {
    return changesetTagsFor(library, count, this.config.mapdb.planUrl);
  }
}
