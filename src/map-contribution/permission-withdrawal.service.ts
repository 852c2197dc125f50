import { Injectable } from '@nestjs/common';
import { RefusedError } from '../common/errors/domain-errors.js';
import { ContributionRecordsService } from './contribution-records.service.js';
import type { ContributionRecordResponse } from './dto/map-contribution.dto.js';
import { ContributionTransitions } from './contribution-transitions.repository.js';
import { MapContributionRepository } from './map-contribution.repository.js';
import type { Actor } from './map-writer.service.js';

/** Staff withdrawal of the submitter's permission: true → false only, recorded as an event. */
@Injectable()
export class PermissionWithdrawalService {
  constructor(
    private readonly repository: MapContributionRepository,
    private readonly transitions: ContributionTransitions,
    private readonly records: ContributionRecordsService,
  ) {}

  async withdraw(slug: string, actor: Actor): Promise<ContributionRecordResponse> {
    const { library } = await this.records.load(slug);
    await this.repository.transaction(async (tx) => {
      // Library row first, then the record: the write claim takes them in that order, so a withdrawal racing a
      // confirm waits for it instead of deadlocking.
      await this.repository.findLibrary(slug, tx, true);
      const record = await this.repository.lockOrCreateRecord(tx, library.id);
      if (!(await this.repository.withdrawPermission(tx, library.id))) {
        throw new RefusedError(
          'The map submission permission is already withdrawn (or was never given).',
        );
      }
      await this.transitions.addEvent(tx, record, {
        type: 'permission_withdrawal',
        outcome: 'withdrawn',
        actor,
      });
    });
    // The library row changed (the permission): the answer reads it again.
    return this.records.detail(slug);
  }
}
