import { Injectable } from '@nestjs/common';
import { Database, type Sql } from '../../database/database.js';

/** pg_advisory_lock key of the orphan sweep: one instance sweeps at a time. */
export const SWEEP_LOCK_KEY = 0x6d656469; // "medi"

/** Every column that can hold a media key, each read through its own index (migration 1764400000000). */
const REFERENCED_KEYS_SQL = `
  SELECT photo_key AS key FROM libraries WHERE photo_key = ANY($1::text[])
  UNION SELECT thumbnail_key FROM libraries WHERE thumbnail_key = ANY($1::text[])
  UNION SELECT pending_photo->>'photo_key' FROM libraries
    WHERE pending_photo IS NOT NULL AND pending_photo->>'photo_key' = ANY($1::text[])
  UNION SELECT pending_photo->>'thumbnail_key' FROM libraries
    WHERE pending_photo IS NOT NULL AND pending_photo->>'thumbnail_key' = ANY($1::text[])
  UNION SELECT photo_key FROM library_photos WHERE photo_key = ANY($1::text[])
  UNION SELECT thumbnail_key FROM library_photos WHERE thumbnail_key = ANY($1::text[])
  UNION SELECT photo_key FROM reports WHERE photo_key = ANY($1::text[])
  UNION SELECT thumbnail_key FROM reports WHERE thumbnail_key = ANY($1::text[])`;

@Injectable()
export class MediaReferencesRepository {
  constructor(private readonly db: Database) {}

  /**
   * Runs `work` holding the sweep's session advisory lock on one connection, which `work`'s lookups share (so the
   * sweep needs one pool connection, also with the embedded database's pool of one); null, without running it,
   * when another instance holds the lock. `findReferenced` answers the subset of `keys` some row references (a
   * library, its staged edit, a community photo, a report).
   */
  withSweepLock<T>(
    work: (findReferenced: (keys: string[]) => Promise<Set<string>>) => Promise<T>,
  ): Promise<T | null> {
    return this.db.withConnection(async (sql) => {
      const [{ locked }] = await sql.query<{ locked: boolean }[]>(
        'SELECT pg_try_advisory_lock($1) AS locked',
        [SWEEP_LOCK_KEY],
      );
      if (!locked) return null;
      try {
        return await work((keys) => findReferenced(sql, keys));
      } finally {
        await sql.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK_KEY]).catch(() => undefined);
      }
    });
  }
}

async function findReferenced(sql: Sql, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const rows = await sql.query<{ key: string }[]>(REFERENCED_KEYS_SQL, [keys]);
  return new Set(rows.map((row) => row.key));
}
