import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/database.js';
import { Clock } from '../common/clock.js';
import { paginate, type Page } from '../common/pagination/pagination.js';
import type { AuditEventResponse, AuditKind, AuditQueryDto } from './dto/moderation-audit.dto.js';
import {
  ModerationAuditRepository,
  type AuditEventRow,
  type AuditFilter,
} from './moderation-audit.repository.js';

/** Who decided: a staff member, or null for the command line. */
export type AuditActor = { id: number; username: string } | null;

/**
 * The moderation audit trail. `record` is always called inside the transaction of the decision it describes, so a
 * decision and its record are committed (or rolled back) together.
 */
@Injectable()
export class ModerationAuditService {
  constructor(
    private readonly repository: ModerationAuditRepository,
    private readonly clock: Clock,
  ) {}

  record(
    tx: Sql,
    kind: AuditKind,
    actor: AuditActor,
    libraryId: number | null,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.repository.insert(tx, {
      kind,
      actor: actor ? { id: actor.id, username: actor.username } : null,
      libraryId,
      details,
      at: this.clock.date(),
    });
  }

  list(query: AuditQueryDto): Promise<Page<AuditEventResponse>> {
    const filter: AuditFilter = {
      kind: query.kind,
      actor: query.actor || undefined,
      library: query.library || undefined,
    };
    return paginate(
      query,
      () => this.repository.count(filter),
      async (limit, offset) =>
        (await this.repository.find(filter, limit, offset)).map((row) => this.response(row)),
    );
  }

  private response(row: AuditEventRow): AuditEventResponse {
    return {
      id: Number(row.id),
      kind: row.kind,
      actor:
        row.actor_id !== null && row.actor_username !== null
          ? { id: row.actor_id, username: row.actor_username }
          : null,
      library:
        row.library_slug !== null
          ? {
              id: row.library_id!,
              slug: row.library_slug,
              name: row.library_name ?? '',
              address: row.library_address ?? '',
              city: row.library_city ?? '',
              country: row.library_country ?? '',
              status: row.library_status ?? '',
            }
          : null,
      details: row.details,
      created_at: new Date(row.created_at).toISOString(),
    };
  }
}
