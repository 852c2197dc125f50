import { Injectable, Logger } from '@nestjs/common';
import type { Transaction } from '../database/database.js';
import { Clock } from '../common/clock.js';
import { formatCoordinate, MapApiError } from './adapters/map-api.client.js';
import { ContributionHistoryRepository } from './contribution-history.repository.js';
import { ContributionRecordsService } from './contribution-records.service.js';
import type { ContributionRow } from './contribution-rows.js';
import { ContributionRefused } from './domain/refusal.js';
import { transition } from './domain/state-machine.js';
import { STUCK_WRITE_MS } from './domain/timing.js';
import type { ContributionRecordResponse } from './dto/map-contribution.dto.js';
import { ContributionTransitions } from './contribution-transitions.repository.js';
import { MapContributionRepository } from './map-contribution.repository.js';
import type { Actor } from './map-writer.service.js';
import { disablesWrites, WriteGatesService } from './write-gates.service.js';

/** The node position a write_started event recorded, or null when there is none. */
function startedPosition(
  details: Record<string, unknown> | undefined,
): { lat: number; lon: number } | null {
  const node = details?.node as { lat?: unknown; lon?: unknown } | undefined;
  if (typeof node?.lat !== 'number' || typeof node.lon !== 'number') return null;
  return { lat: node.lat, lon: node.lon };
}

function notFailed(): ContributionRefused {
  return new ContributionRefused([
    { code: 'element_recorded', message: 'Only a failed contribution can be reconciled.' },
  ]);
}

function inProgress(): ContributionRefused {
  return new ContributionRefused([
    {
      code: 'writes_disabled',
      message: 'A reconciliation of this library is already in progress; try again when it ends.',
    },
  ]);
}

/** Whether the record is still exactly the failed write the reconciliation read (nobody stored an outcome since). */
function unchanged(read: ContributionRow, now: ContributionRow): boolean {
  return (
    now.status === read.status &&
    now.changeset_id === read.changeset_id &&
    now.last_attempt_key === read.last_attempt_key &&
    now.mapdb_element_id === read.mapdb_element_id
  );
}

/**
 * Only for a failed record (or one stuck in submitting): finds out what the recorded changeset holds; never creates
 * anything. The map is read without any lock or transaction; the outcome is then stored under the record's lock
 * (NOWAIT: a reconciliation storing its own outcome at that moment refuses this one) only when the record is still
 * the one that was read, so of two concurrent reconciliations exactly one stores an outcome. Closing a changeset
 * left open is a side effect after that commit, made by the one that stored.
 */
@Injectable()
export class ReconciliationService {
  private readonly logger = new Logger(ReconciliationService.name);

  constructor(
    private readonly repository: MapContributionRepository,
    private readonly transitions: ContributionTransitions,
    private readonly history: ContributionHistoryRepository,
    private readonly records: ContributionRecordsService,
    private readonly gates: WriteGatesService,
    private readonly clock: Clock,
  ) {}

  async reconcile(slug: string, actor: Actor): Promise<ContributionRecordResponse> {
    const { library, record } = await this.records.load(slug);
    if (!record || (record.status !== 'failed' && record.status !== 'submitting'))
      throw notFailed();
    const started = await this.history.lastWriteStarted(record.id);
    if (record.status === 'submitting') {
      // Crash recovery: a write that has not ended within STUCK_WRITE_MS is taken as dead. A younger one may still
      // be in flight and is left alone.
      const age = started
        ? this.clock.now() - new Date(started.created_at).getTime()
        : Number.POSITIVE_INFINITY;
      if (!(age > STUCK_WRITE_MS)) {
        throw new ContributionRefused([
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
    let candidates: { id: number }[] = [];
    let open = false;
    if (changesetId !== null) {
      try {
        const download = await this.gates.api.downloadChangeset(changesetId);
        open = download.open;
        // A batch changeset holds several libraries' nodes: this library's is the one at the exact position its
        // write_started recorded (and, below, never one already linked to another library).
        candidates = download.created.filter(
          (element) =>
            element.type === 'node' &&
            element.tags.amenity === 'public_bookcase' &&
            (target === null ||
              (element.lat !== null &&
                element.lon !== null &&
                formatCoordinate(element.lat) === formatCoordinate(target.lat) &&
                formatCoordinate(element.lon) === formatCoordinate(target.lon))),
        );
      } catch (error) {
        await this.unreadable(record, actor, error);
      }
    }

    await this.underLock(record, async (tx, current) => {
      const linked = candidates.length
        ? await this.repository.linkedElements(library.id, tx)
        : new Set<string>();
      const found = candidates.find((element) => !linked.has(`node/${element.id}`)) ?? null;
      const event = {
        type: 'reconciliation',
        outcome: found ? 'contributed' : 'nothing_created',
        actor,
        details: {
          changeset_id: changesetId,
          element: found ? `node/${found.id}` : null,
          closed_changeset: open,
        },
      };
      if (found) {
        await this.transitions.markReconciledFound(
          tx,
          current,
          transition(current.status, 'reconciled_found'),
          { nodeId: found.id, by: actor.id, at: this.clock.date() },
          event,
        );
      } else {
        await this.transitions.markReconciledAbsent(
          tx,
          current,
          transition(current.status, 'reconciled_absent'),
          event,
        );
      }
    });

    if (open && changesetId !== null) await this.close(changesetId);
    return this.records.view(library);
  }

  /**
   * Stores an outcome under the record's lock, only while the record is still the one the reconciliation read:
   * refused when another reconciliation is storing (NOWAIT) or already stored its outcome.
   */
  private underLock(
    read: ContributionRow,
    store: (tx: Transaction, current: ContributionRow) => Promise<void>,
  ): Promise<void> {
    return this.repository.transaction(async (tx) => {
      const current = await this.repository.lockRecordNoWait(tx, read.library_id);
      if (current === 'locked') throw inProgress();
      if (!current || !unchanged(read, current)) throw notFailed();
      await store(tx, current);
    });
  }

  /** The changeset could not be read: recorded on the record (which stays as it is), then refused. */
  private async unreadable(record: ContributionRow, actor: Actor, error: unknown): Promise<never> {
    const code = error instanceof MapApiError ? `reconcile_${error.code}` : 'reconcile_error';
    await this.underLock(record, (tx, current) =>
      this.transitions.markReconcileFailed(tx, current, code, {
        type: 'reconciliation',
        outcome: 'failed',
        actor,
        details: { error_code: code },
      }),
    );
    if (disablesWrites(error)) await this.gates.disable(error);
    throw new ContributionRefused([
      { code: 'check_failed', message: 'The changeset could not be read; try again later.' },
    ]);
  }

  /**
   * Closes a changeset the failed write left open, after the outcome is stored. A failure here changes nothing
   * recorded: the node (if any) exists either way, and the map API closes an idle changeset by itself.
   */
  private async close(changesetId: number): Promise<void> {
    try {
      await this.gates.api.closeChangeset(changesetId);
    } catch (error) {
      if (disablesWrites(error)) await this.gates.disable(error);
      const reason = error instanceof MapApiError ? error.code : 'error';
      this.logger.warn(`reconciliation could not close changeset ${changesetId}: ${reason}`);
    }
  }
}
