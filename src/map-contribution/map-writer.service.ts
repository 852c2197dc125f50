import { Injectable, Logger } from '@nestjs/common';
import type { Transaction } from '../database/database.js';
import { Clock } from '../common/clock.js';
import { MapApiError } from './adapters/map-api.client.js';
import type { ContributionRow } from './contribution-rows.js';
import type { WritePayload } from './contribution.mapper.js';
import { transition } from './domain/state-machine.js';
import type { WriteGates } from './domain/types.js';
import { ContributionTransitions } from './contribution-transitions.repository.js';
import { disablesWrites, WriteGatesService } from './write-gates.service.js';

export type Actor = { id: number; username: string };

/** One library claimed for a write (status submitting, write_started recorded) with its own attempt key. */
export interface WriteClaim {
  record: ContributionRow;
  payload: WritePayload;
  attemptKey: string;
}

/** What a write did: its changeset, whether any step failed, and the gates when a 401/403 closed them. */
export interface WriteOutcome {
  changesetId: number | null;
  failed: boolean;
  disabledGates: WriteGates | null;
}

/** A batch library that was never sent because an earlier call of its batch failed. */
class BatchAbortedError extends Error {
  constructor() {
    super('An earlier call of the batch failed; nothing was sent for this library.');
  }
}

/**
 * The write itself, steps (2)–(6) of the spec's write order, for claims that share one changeset (a single
 * confirm is a batch of one). Claims are taken inside the caller's locked transaction; the map calls run after it
 * committed, and every id is persisted as soon as it is known.
 */
@Injectable()
export class MapWriterService {
  private readonly logger = new Logger(MapWriterService.name);

  constructor(
    private readonly transitions: ContributionTransitions,
    private readonly gates: WriteGatesService,
    private readonly clock: Clock,
  ) {}

  /** Step (2), inside the caller's locked transaction: status submitting with its write_started event. */
  async claim(
    tx: Transaction,
    record: ContributionRow,
    payload: WritePayload,
    attemptKey: string,
    actor: Actor,
  ): Promise<WriteClaim> {
    await this.transitions.markSubmitting(
      tx,
      record,
      transition(record.status, 'write_started'),
      attemptKey,
      {
        type: 'write_started',
        outcome: 'started',
        actor,
        attemptKey,
        details: { ...payload },
        // The injected clock's time: crash recovery ages a stuck `submitting` record by it.
        at: this.clock.date(),
      },
    );
    return { record, payload, attemptKey };
  }

  /**
   * Steps (3)–(6): create the changeset and persist its id; create each node in order and persist its id at once;
   * close; record success. The first failure stops the batch: nothing is retried and no later node is sent. When no
   * node is known the changeset is left for reconciliation; otherwise it is closed so the known nodes count as
   * contributed. Every library without a confirmed, closed node ends `failed` (known ids kept) and needs
   * reconciliation.
   */
  async write(claims: WriteClaim[], actor: Actor): Promise<WriteOutcome> {
    let changesetId: number | null = null;
    const created = new Map<WriteClaim, number>();
    let failure: { error: unknown } | null = null;
    try {
      changesetId = await this.gates.api.createChangeset(claims[0].payload.changeset_tags);
      await this.transitions.markChangeset(
        claims.map((claim) => claim.record.id),
        changesetId,
      );
      for (const claim of claims) {
        const { lat, lon, tags } = claim.payload.node;
        const nodeId = await this.gates.api.createNode(changesetId, lat, lon, tags);
        await this.transitions.markNodeCreated(claim.record.id, nodeId);
        created.set(claim, nodeId);
      }
    } catch (error) {
      failure = { error };
    }

    let closeFailure: { error: unknown } | null = null;
    if (changesetId !== null && created.size > 0) {
      try {
        await this.gates.api.closeChangeset(changesetId);
      } catch (error) {
        closeFailure = { error };
      }
    }

    let disabledGates: WriteGates | null = null;
    const fail = async (claim: WriteClaim, error: unknown, known: Record<string, unknown>) => {
      if (disablesWrites(error)) disabledGates = await this.gates.disable(error);
      await this.fail(claim, actor, error, known);
    };
    let firstUnsent = true;
    for (const claim of claims) {
      const nodeId = created.get(claim);
      if (nodeId !== undefined && closeFailure) {
        // The node exists: keep its id and reconcile the changeset instead of creating another node.
        await fail(claim, closeFailure.error, {
          changeset_id: changesetId,
          node_id: nodeId,
          step: 'close',
        });
      } else if (nodeId !== undefined) {
        await this.transitions.markWritten(
          claim.record,
          transition('submitting', 'write_succeeded'),
          { id: actor.id, at: this.clock.date() },
          {
            type: 'write_succeeded',
            outcome: 'contributed',
            actor,
            attemptKey: claim.attemptKey,
            details: { element: `node/${nodeId}`, changeset_id: changesetId },
          },
        );
      } else {
        // The changeset create failed for every claim alike; otherwise the first claim without a node met the
        // failure and the rest were never sent.
        const error =
          changesetId === null || firstUnsent ? failure?.error : new BatchAbortedError();
        firstUnsent = false;
        await fail(claim, error, { changeset_id: changesetId });
      }
    }
    return { changesetId, failed: failure !== null || closeFailure !== null, disabledGates };
  }

  private async fail(
    claim: WriteClaim,
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
    if (!(error instanceof MapApiError) && !aborted)
      this.logger.error(`map write failed: ${(error as Error | undefined)?.message ?? 'unknown'}`);
    await this.transitions.markFailed(
      claim.record,
      transition('submitting', 'write_failed'),
      { code, message },
      {
        type: 'write_failed',
        outcome: 'reconcile_required',
        actor,
        attemptKey: claim.attemptKey,
        details: { error_code: code, ...known },
      },
    );
  }
}
