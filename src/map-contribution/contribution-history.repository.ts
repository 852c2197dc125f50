import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import {
  actorLibraryConditions,
  whereClause,
  type ActorLibraryFilter,
} from '../moderation-audit/audit-filter.js';
import type { EventRow } from './contribution-rows.js';

/** An event of the whole history, with the library it concerns (null once the library was deleted). */
export interface HistoryEventRow extends EventRow {
  library_slug: string | null;
  library_name: string | null;
}

/** Filters of the history: the staff member's username (case-insensitive) and the library's slug. */
export type HistoryFilter = ActorLibraryFilter;

function historyWhere(filter: HistoryFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  return { where: whereClause(actorLibraryConditions(filter, params)), params };
}

/** The append-only audit events, read back: one record's, the last write_started, the whole history. */
@Injectable()
export class ContributionHistoryRepository {
  constructor(private readonly db: Database) {}

  /** The record's most recent write_started event (time and exact payload), or null. */
  async lastWriteStarted(
    recordId: number,
  ): Promise<{ created_at: Date; details: Record<string, unknown> } | null> {
    const rows: { created_at: Date; details: Record<string, unknown> }[] = await this.db.query(
      `SELECT created_at, details FROM map_contribution_events
         WHERE contribution_id = $1 AND event_type = 'write_started' ORDER BY id DESC LIMIT 1`,
      [recordId],
    );
    return rows[0] ?? null;
  }

  events(recordId: number): Promise<EventRow[]> {
    return this.db.query(
      `SELECT event_type, outcome, actor_id, actor_username, attempt_key, details, created_at
       FROM map_contribution_events WHERE contribution_id = $1 ORDER BY id`,
      [recordId],
    );
  }

  async countAllEvents(filter: HistoryFilter = {}): Promise<number> {
    const { where, params } = historyWhere(filter);
    const rows = await this.db.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM map_contribution_events e ${where}`,
      params,
    );
    return rows[0].count;
  }

  /** The whole audit history (or one actor's, one library's), newest first. */
  allEvents(limit: number, offset: number, filter: HistoryFilter = {}): Promise<HistoryEventRow[]> {
    const { where, params } = historyWhere(filter);
    return this.db.query(
      `SELECT e.event_type, e.outcome, e.actor_id, e.actor_username, e.attempt_key, e.details, e.created_at,
              l.slug AS library_slug, l.name AS library_name
         FROM map_contribution_events e
         LEFT JOIN libraries l ON l.id = e.library_id
        ${where}
        ORDER BY e.id DESC
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }
}
