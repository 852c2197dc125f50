import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { withClient } from './database.js';
import { mediaFiles } from './libraries.js';

/** Every media key a row references (libraries, their staged photos, community photos, reports). */
export async function referencedMediaKeys(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ key: string }>(
      `SELECT k AS key FROM (
         SELECT unnest(ARRAY[photo_key, thumbnail_key, pending_photo->>'photo_key', pending_photo->>'thumbnail_key']) k
         FROM libraries
         UNION ALL SELECT unnest(ARRAY[photo_key, thumbnail_key]) FROM library_photos
         UNION ALL SELECT unnest(ARRAY[photo_key, thumbnail_key]) FROM reports
       ) keys WHERE k IS NOT NULL`,
    );
    return rows.map((row) => row.key);
  });
}

export interface MediaAudit {
  /** Keys a row references whose file is missing. */
  missing: string[];
  /** Files under the media root no row references. */
  unreferenced: string[];
}

/** Compares the rows' media keys with the files under `mediaRoot` (run the sweep first to count orphans after it). */
export async function auditMedia(url: string, mediaRoot: string): Promise<MediaAudit> {
  const referenced = new Set(await referencedMediaKeys(url));
  const files = mediaFiles(mediaRoot);
  return {
    missing: [...referenced].filter((key) => !existsSync(join(mediaRoot, key))).sort(),
    unreferenced: files.filter((file) => !referenced.has(file)),
  };
}
