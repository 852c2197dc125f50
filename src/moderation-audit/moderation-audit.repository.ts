import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../database/database.js';
import { actorLibraryConditions, whereClause, type ActorLibraryFilter } from './audit-filter.js';

export interface AuditFilter extends ActorLibraryFilter {
  kind?: string;
}

export interface NewAuditEvent {
  kind: string;
  actor: { id: number; username: string } | null;
  libraryId: number | null;
  details: Record<string, unknown>;
  at: Date;
}

export interface AuditEventRow {
  id: string;
  kind: string;
  actor_id: number | null;
  actor_username: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  library_id: number | null;
  library_slug: string | null;
  library_name: string | null;
  library_address: string | null;
  library_city: string | null;
  library_country: string | null;
  library_status: string | null;
}

/** Each filter reads its own index (kind, lower(actor_username), library_id — each with id for the order). */
function auditWhere(filter: AuditFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  if (filter.kind) {
    params.push(filter.kind);
    conditions.push(`e.kind = $${params.length}`);
  }
  conditions.push(...actorLibraryConditions(filter, params));
  return { where: whereClause(conditions), params };
}

/** The append-only moderation audit trail: inserts (inside the caller's transaction) and filtered reads. */
@Injectable()
export class ModerationAuditRepository {
  constructor(private readonly db: Database) {}

  async insert(tx: Sql, event: NewAuditEvent): Promise<void> {
    await tx.query(
      `INSERT INTO moderation_audit_events (kind, actor_id, actor_username, library_id, details, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        event.kind,
        event.actor?.id ?? null,
        event.actor?.username ?? null,
        event.libraryId,
        JSON.stringify(event.details),
        event.at,
      ],
    );
  }

  async count(filter: AuditFilter): Promise<number> {
    const { where, params } = auditWhere(filter);
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM moderation_audit_events e ${where}`,
      params,
    );
    return rows[0].n;
  }

  /** Newest first (ids grow with time). */
  find(filter: AuditFilter, limit: number, offset: number): Promise<AuditEventRow[]> {
    const { where, params } = auditWhere(filter);
    return this.db.query(
      `SELECT e.id, e.kind, e.actor_id, e.actor_username, e.details, e.created_at, e.library_id,
              l.slug AS library_slug, l.name AS library_name, l.address AS library_address,
              l.city AS library_city, l.country AS library_country, l.status AS library_status
         FROM moderation_audit_events e
         LEFT JOIN libraries l ON l.id = e.library_id
         ${where}
        ORDER BY e.id DESC
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }
}
