/**
 * The aggregates that triggers keep of the approved libraries (library_counts, library_country_counts,
 * library_city_counts, library_postal_code_counts, library_place_grams) checked against a recount of the libraries
 * themselves, through the same sequence of writes, and the community photos that make the list's `has_photo` differ
 * from a primary photo.
 */
import { queryRows } from './database.js';

/** A library `l` has a photo for the list's `has_photo`: a primary one or an approved community photo. */
export const HAS_PHOTO = `(l.photo_key IS NOT NULL OR EXISTS (SELECT 1 FROM library_photos p
                          WHERE p.library_id = l.id AND p.status = 'approved'))`;

export interface Aggregate {
  table: string;
  /** The aggregate's key columns as one text expression (`country || '|' || day`). */
  key: string;
  /** The same key computed from a row of `from` (the aggregate's key unless told). */
  recountKey?: string;
  /** The rows recounted, with `photo_key` (the approved libraries unless told). */
  from?: string;
}

const APPROVED = `libraries WHERE status = 'approved'`;

const lines = async (url: string, text: string): Promise<string[]> =>
  (await queryRows<{ line: string }>(url, text)).map((row) => row.line);

/**
 * Expects each aggregate's rows with non-zero counts, as `key|approved|with_photo` lines, to equal a recount of its
 * rows grouped by the key (`with_photo` counts primary photos).
 */
export async function expectRecounted(url: string, ...aggregates: Aggregate[]): Promise<void> {
  for (const { table, key, recountKey = key, from = APPROVED } of aggregates) {
    expect({
      table,
      lines: await lines(
        url,
        `SELECT ${key} || '|' || approved || '|' || with_photo AS line FROM ${table}
         WHERE approved <> 0 OR with_photo <> 0 ORDER BY 1`,
      ),
    }).toEqual({
      table,
      lines: await lines(
        url,
        `SELECT key || '|' || count(*) || '|' || count(*) FILTER (WHERE photo_key IS NOT NULL) AS line
         FROM (SELECT ${recountKey} AS key, photo_key FROM ${from}) r GROUP BY key ORDER BY 1`,
      ),
    });
  }
}

export interface CountedWrites {
  /** The slug prefix of the libraries the suite inserted (`<prefix>-<i>`); writes touch slugs by number. */
  prefix: string;
  /** Pending libraries to approve. */
  approve: number[];
  /** Updates that move libraries from one key of the aggregate to another (a country, a day, a city …). */
  moves: string[];
  /** An approved library whose primary photo is removed, and one without a photo that gets one. */
  photo: { remove: number; add: number };
  /** The check after each step (the inserts before it). */
  check: () => Promise<void>;
}

/**
 * The writes every aggregate must follow, each step checked: approvals, rejections (`<prefix>-1…`), the suite's
 * moves with a photo removed and one added and an unrelated change (a rename of `<prefix>-3…`), then deletions
 * (`<prefix>-5…` and `<prefix>-2`).
 */
export async function applyCountedWrites(url: string, writes: CountedWrites): Promise<void> {
  const { prefix, check } = writes;
  const sql = (text: string, params: unknown[]) => queryRows(url, text, params);
  const slug = (i: number) => `${prefix}-${i}`;
  await check();
  await sql(`UPDATE libraries SET status = 'approved' WHERE slug = ANY($1)`, [
    writes.approve.map(slug),
  ]);
  await check();
  await sql(`UPDATE libraries SET status = 'rejected' WHERE slug LIKE $1`, [`${prefix}-1%`]);
  await check();
  for (const move of writes.moves) await sql(move, []);
  await sql(`UPDATE libraries SET photo_key = NULL, thumbnail_key = NULL WHERE slug = $1`, [
    slug(writes.photo.remove),
  ]);
  await sql(`UPDATE libraries SET photo_key = 'p.jpg', thumbnail_key = 't.jpg' WHERE slug = $1`, [
    slug(writes.photo.add),
  ]);
  await sql(`UPDATE libraries SET name = 'Renamed' WHERE slug LIKE $1`, [`${prefix}-3%`]);
  await check();
  await sql(`DELETE FROM libraries WHERE slug LIKE $1 OR slug = $2`, [`${prefix}-5%`, slug(2)]);
  await check();
}

/**
 * Gives one library without a primary photo two approved community photos (it has a photo now), and another a
 * pending one (it still has none).
 */
export async function addCommunityPhotos(
  url: string,
  libraries: { approved: number; pending: number },
): Promise<void> {
  for (const [id, status] of [
    [libraries.approved, 'approved'],
    [libraries.approved, 'approved'],
    [libraries.pending, 'pending'],
  ])
    await queryRows(
      url,
      `INSERT INTO library_photos (library_id, photo_key, thumbnail_key, status)
       VALUES ($1, 'cp.jpg', 'cp_t.jpg', $2)`,
      [id, status],
    );
}
