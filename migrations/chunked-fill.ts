import type { QueryRunner } from 'typeorm';

/** Library ids per chunk of the search bitmaps (`chunk = id >> 13`, bit `id & 8191`). */
const CHUNK_IDS = 8192;
/** How long a chunk's transaction waits for the table lock before it lets the queued writers pass and tries again. */
const LOCK_TIMEOUT = '2s';
const LOCK_ATTEMPTS = 150;
/**
 * How many times a chunk's rows are computed without the lock when its libraries were written meanwhile; the last
 * time they are computed under it (a chunk that is written all the time: the newest, where libraries are inserted).
 */
const COMPUTE_ATTEMPTS = 3;

/** A trigger-kept table of per-chunk rows that `fillByChunk` fills. */
export interface ChunkedFill {
  /** The table; it has a `chunk` column and an index whose first column is `chunk`. */
  table: string;
  /** The columns `rows` gives, in its order. */
  columns: string;
  /** The rows of chunk `$1`, from the libraries `l` with ids `$1 * 8192` to `$1 * 8192 + 8191`. */
  rows: string;
}

const errorCode = (error: unknown): unknown =>
  (error as { driverError?: { code?: unknown }; code?: unknown }).driverError?.code ??
  (error as { code?: unknown }).code;

/**
 * Fills a table of per-chunk bitmaps that statement-level triggers keep (XOR toggles), whose triggers already exist
 * and are committed, without blocking writes to `libraries` for the whole fill (issue 22, brief 22b): per chunk of
 * 8,192 ids, the chunk's rows are computed without a lock (into a temporary table, with the row versions of the
 * libraries they come from), then a short transaction takes `SHARE` on `libraries` (no write is in flight, and none
 * starts, until it commits), checks that the chunk's libraries are still those versions (else it lets the lock go and
 * computes again, the third time under the lock), deletes the chunk's rows and writes the computed ones. The toggles the triggers made in a chunk
 * before its fill started from an empty row, not from the chunk's state, so they are dropped with it; from its commit
 * on, the triggers toggle from the exact state. Chunks from the lowest id up to the highest id at the
 * start (a chunk holding only rows the triggers wrote since is visited too, for its toggles); the chunks above hold
 * only libraries inserted since the triggers exist, exact already. A chunk that waits `LOCK_TIMEOUT` for the lock
 * (a long write transaction ahead of it) gives up and tries again, so writers never queue behind it for longer.
 * Each chunk's transaction redoes the chunk whole, so an interrupted fill can be run again.
 */
export async function fillByChunk(queryRunner: QueryRunner, fill: ChunkedFill): Promise<void> {
  const [{ last }] = (await queryRunner.query(
    'SELECT (max(id) >> 13)::int AS last FROM libraries',
  )) as { last: number | null }[];
  if (last === null) {
    // No library: only toggles of libraries written since the triggers exist, exact.
    return;
  }
  for (let chunk = await nextChunk(queryRunner, fill.table, 0); chunk !== null && chunk <= last;) {
    await fillChunk(queryRunner, fill, chunk);
    chunk = await nextChunk(queryRunner, fill.table, chunk + 1);
  }
}

/** The lowest chunk from `from` on with a library or a row of `table`. */
async function nextChunk(
  queryRunner: QueryRunner,
  table: string,
  from: number,
): Promise<number | null> {
  const [{ chunk }] = (await queryRunner.query(
    `SELECT least((SELECT l.id >> 13 FROM libraries l WHERE l.id >= $1::bigint * ${CHUNK_IDS} ORDER BY l.id LIMIT 1),
                  (SELECT t.chunk FROM ${table} t WHERE t.chunk >= $1 ORDER BY t.chunk LIMIT 1))::int AS chunk`,
    [from],
  )) as { chunk: number | null }[];
  return chunk;
}

/** The chunk's libraries `l`. */
const IN_CHUNK = `l.id >= $1::int * ${CHUNK_IDS}::bigint AND l.id < ($1::int + 1) * ${CHUNK_IDS}::bigint`;

async function fillChunk(
  queryRunner: QueryRunner,
  fill: ChunkedFill,
  chunk: number,
): Promise<void> {
  for (let computed = 1; ; computed += 1) {
    await computeChunk(queryRunner, fill, chunk);
    if (await writeChunk(queryRunner, fill, chunk, computed === COMPUTE_ATTEMPTS)) return;
  }
}

/** Without a lock, from one snapshot: the rows, and the versions of the libraries read (xmin changes with a write). */
async function computeChunk(
  queryRunner: QueryRunner,
  fill: ChunkedFill,
  chunk: number,
): Promise<void> {
  await queryRunner.startTransaction('REPEATABLE READ');
  try {
    await queryRunner.query('DROP TABLE IF EXISTS chunk_fill_rows, chunk_fill_versions');
    await queryRunner.query(
      `CREATE TEMPORARY TABLE chunk_fill_rows (${fill.columns}) AS ${fill.rows}`,
      [chunk],
    );
    await queryRunner.query(
      `CREATE TEMPORARY TABLE chunk_fill_versions AS
       SELECT l.id, l.xmin::text AS version FROM libraries l WHERE ${IN_CHUNK}`,
      [chunk],
    );
    await queryRunner.commitTransaction();
  } catch (error) {
    await queryRunner.rollbackTransaction();
    throw error;
  }
}

/**
 * Under `SHARE` on `libraries`: the chunk's rows replaced by the computed ones if its libraries are still the
 * versions they were computed from. Otherwise false (the lock released, to compute again), or on the `last` try the
 * rows computed under the lock.
 */
async function writeChunk(
  queryRunner: QueryRunner,
  fill: ChunkedFill,
  chunk: number,
  last: boolean,
): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    await queryRunner.startTransaction();
    try {
      await queryRunner.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      await queryRunner.query('LOCK TABLE libraries IN SHARE MODE');
      // The same libraries in the same versions: no (id, version) on one side only.
      const [{ same }] = (await queryRunner.query(
        `WITH now AS (SELECT l.id, l.xmin::text AS version FROM libraries l WHERE ${IN_CHUNK})
         SELECT NOT EXISTS ((TABLE now EXCEPT TABLE chunk_fill_versions)
                            UNION ALL (TABLE chunk_fill_versions EXCEPT TABLE now)) AS same`,
        [chunk],
      )) as { same: boolean }[];
      if (!same && !last) {
        await queryRunner.rollbackTransaction();
        return false;
      }
      await queryRunner.query(`DELETE FROM ${fill.table} WHERE chunk = $1`, [chunk]);
      if (same)
        await queryRunner.query(
          `INSERT INTO ${fill.table} (${fill.columns}) SELECT * FROM chunk_fill_rows`,
        );
      else
        await queryRunner.query(`INSERT INTO ${fill.table} (${fill.columns}) ${fill.rows}`, [
          chunk,
        ]);
      await queryRunner.query('DROP TABLE chunk_fill_rows, chunk_fill_versions');
      await queryRunner.commitTransaction();
      return true;
    } catch (error) {
      await queryRunner.rollbackTransaction();
      // 55P03 lock_not_available: lock_timeout.
      if (errorCode(error) !== '55P03' || attempt === LOCK_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Runs `work` in a transaction of its own unless `table` exists already: the structure a migration creates before its
 * chunked fill, which a run interrupted during the fill leaves behind for the next run.
 */
export async function createUnlessExists(
  queryRunner: QueryRunner,
  table: string,
  work: () => Promise<void>,
): Promise<void> {
  const [{ exists }] = (await queryRunner.query('SELECT to_regclass($1) IS NOT NULL AS exists', [
    table,
  ])) as { exists: boolean }[];
  if (exists) return;
  await queryRunner.startTransaction();
  try {
    await work();
    await queryRunner.commitTransaction();
  } catch (error) {
    await queryRunner.rollbackTransaction();
    throw error;
  }
}

/**
 * `CREATE INDEX CONCURRENTLY` (no lock that blocks writes), as a run interrupted earlier may have left it: kept when
 * it was built, built again when an interrupted build left it invalid. `definition` is what follows `CREATE INDEX`.
 */
export async function createIndexConcurrently(
  queryRunner: QueryRunner,
  name: string,
  definition: string,
): Promise<void> {
  const [index] = (await queryRunner.query(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`,
    [name],
  )) as { valid: boolean }[];
  if (index?.valid) return;
  if (index) await queryRunner.query(`DROP INDEX CONCURRENTLY ${name}`);
  await queryRunner.query(`CREATE INDEX CONCURRENTLY ${name} ${definition}`);
}
