import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { paginateTogether, type Page } from '../common/pagination/pagination.js';
import { PreparedReader } from '../database/prepared-reader.js';
import type { ListItemRow } from './library.row.js';
import { ListCache, type ListCacheStats } from './list-cache.js';
import {
  byIdsQuery,
  circleGridCountAndPageQuery,
  countAndPageQuery,
  countQuery,
  countsFromAggregate,
  isRanked,
  listReadPlan,
  pageIdsQuery,
  pageQuery,
  substringPageWindow,
  textPageWindow,
  type LibrarySearch,
  type Statement,
} from './list-query.js';

/**
 * From this many matching rows on, a list's count (and, for `q`/`search`, its ranked page) is memoised for
 * LIST_CACHE_TTL_MS. Counting costs about 0.5–1 µs and ranking about 3 µs per matching row, so below this both stay
 * exact on every request at a few milliseconds at most. Proximity results are never memoised: their keys hold
 * coordinates, which hardly ever repeat. Counts read from aggregate tables (the default list, a country, has_photo, one
 * city or postal code filter: countsFromAggregate) are never memoised either: they are exact and read one row per country whatever the size of the table.
 */
export const LARGE_RESULT_ROWS = 1000;
export const LIST_CACHE_TTL_MS = 30_000;

/**
 * Reads the public list of approved libraries: a page with its exact `total`, the latest libraries and the
 * per-country counts. It owns the memo of large results, which callers never see: they ask for a page and get one.
 * The SQL comes from `list-query.ts`. Rows are read with `timestamps: 'iso'`: a page's `created_at` is only ever
 * sent as ISO 8601 text (LibraryMapper.item), which isoTimestamptz writes from PostgreSQL's text without a Date.
 */
@Injectable()
export class ApprovedListRepository {
  private readonly cache: ListCache;

  constructor(
    private readonly reader: PreparedReader,
    clock: Clock,
  ) {
    this.cache = new ListCache(clock, { ttlMs: LIST_CACHE_TTL_MS, maxEntries: 1000 });
  }

  /** Hits and misses of the memo since start (the bench reports them as hit rates). */
  memoStats(): ListCacheStats {
    return this.cache.stats();
  }

  /**
   * One page of the list and its total. A page past the end is the last page. The count and the requested page are
   * read by one statement unless the count comes from the memo; the page is read again when it was past the end.
   * A circle's page read again asks for no more rows than its total leaves (a circle's total is counted for the
   * request, never memoised): the nearest-first walk then stops at the circle's last library instead of reading the
   * rest of the box around it (at 1M, the last page of a 25 km circle of 25 libraries near Brussels: 2,569 rows read
   * and rejected, 20–50 ms).
   */
  page(
    search: LibrarySearch,
    userId: number | null,
    query: { page: number; page_size: number },
  ): Promise<Page<ListItemRow>> {
    let circleTotal: number | null = null;
    return paginateTogether(
      query,
      async (limit, offset) => {
        const { total, rows } = await this.countAndFind(search, userId, limit, offset);
        if (search.near?.radiusMeters !== undefined) circleTotal = total;
        return { total, items: rows };
      },
      (limit, offset) =>
        this.find(
          search,
          userId,
          circleTotal === null ? limit : Math.min(limit, circleTotal - offset),
          offset,
        ),
    );
  }

  /** The newest approved libraries (`has_photo` optional). */
  latest(
    limit: number,
    hasPhoto: boolean | undefined,
    userId: number | null,
  ): Promise<ListItemRow[]> {
    return this.find({ hasPhoto }, userId, limit, 0);
  }

  /** Per-country counts of approved libraries, largest first (`library_country_counts`: exact, never memoised). */
  countByCountry(): Promise<{ country: string; count: number }[]> {
    return this.reader.read<{ country: string; count: number }>(
      `SELECT country, approved AS count FROM library_country_counts
       WHERE approved > 0 ORDER BY approved DESC, country ASC`,
      [],
      false,
    );
  }

  private static key(kind: string, statement: Statement): string {
    return `${kind}\u0000${statement.text}\u0000${JSON.stringify(statement.params)}`;
  }

  /**
   * The count of a public list and, when the count had to be computed, the page at `offset` read by the same
   * statement. `rows` is undefined when the count came from the memo or from a concurrent request's query; the page
   * is then read with find, as it also must when `offset` turns out to be past the end.
   */
  private async countAndFind(
    search: LibrarySearch,
    userId: number | null,
    limit: number,
    offset: number,
  ): Promise<{ total: number; rows: ListItemRow[] | undefined }> {
    const load = async () => {
      const first = countAndPageQuery(search, userId, limit, offset);
      let result = await this.reader.read<ListItemRow & { total: number | null }>(
        first.text,
        first.params,
        listReadPlan(search),
        'iso',
      );
      if (result[0].total === null) {
        // A circle with many libraries around it: counted from the map's grid, whose cells are computed only now,
        // with its page (the first statement read no row).
        const grid = circleGridCountAndPageQuery(search, userId, limit, offset);
        if (!grid) throw new Error('A circle count was left to the grid, which cannot serve it');
        result = await this.reader.read(grid.text, grid.params, 'generic');
      }
      // Every row keeps its `total`, which nothing reads: removing it with a rest spread (V8 copies each
      // 34-column row into a new object) cost about 25 µs per page of 20 rows.
      return { total: result[0].total ?? 0, rows: result.filter((row) => row.id !== null) };
    };
    if (countsFromAggregate(search)) return load();
    let rows: ListItemRow[] | undefined;
    // A proximity count is never kept (its coordinates hardly repeat), only joined by identical concurrent requests:
    // its key is the search itself, since a circle's countQuery computes its grid cells (0.3–1 ms of Node).
    const key = search.near
      ? `count\u0000near\u0000${JSON.stringify(search)}`
      : ApprovedListRepository.key('count', countQuery(search));
    const total = await this.cache.get(
      key,
      async () => {
        const loaded = await load();
        rows = loaded.rows;
        return loaded.total;
      },
      (n) => n >= LARGE_RESULT_ROWS && !search.near,
    );
    // A ranked page read with the count it just memoised, when find would memoise that page's own ids (the first
    // page; not a window): they are these rows', so the next request of the page reads its rows by id instead of
    // ranking the matches again. Without this, a common substring's first page (70 % of the requests) was ranked
    // twice per LIST_CACHE_TTL_MS, the second time for a warm request: at 1M `bücher`'s ORed ~1,250 dense token rows
    // again (brief 22s, session 12).
    if (rows?.length && isRanked(search) && this.cache.has(key)) {
      const { statement, window } = ApprovedListRepository.pageIds(search, limit, offset);
      if (window === null)
        this.cache.set(
          ApprovedListRepository.key('page', statement),
          rows.map((row) => row.id),
        );
    }
    return { total, rows };
  }

  /**
   * The statement a memoised ranked page's ids are read with (its text and values key the memo), and the window of
   * ids it reads from the top (textPageWindow; null: the page's own ids).
   */
  private static pageIds(
    search: LibrarySearch,
    limit: number,
    offset: number,
  ): { statement: Statement; window: number | null } {
    // A `q` or `search` page after the first is read as a window of ids from the top (textPageWindow,
    // substringPageWindow), which serves the pages within it from the memo.
    const window =
      textPageWindow(search, limit, offset) ?? substringPageWindow(search, limit, offset);
    const statement = pageIdsQuery(search, window ?? limit, window === null ? offset : 0);
    return { statement, window };
  }

  /**
   * A page of a public list. A `q` or `search` page of a large result (its count is memoised) is ranked once per
   * LIST_CACHE_TTL_MS: ranking a common word ranks all of its matches. The rows themselves are always read fresh,
   * so edits show at once and a library that is no longer approved drops out.
   */
  private async find(
    search: LibrarySearch,
    userId: number | null,
    limit: number,
    offset: number,
  ): Promise<ListItemRow[]> {
    if (
      isRanked(search) &&
      this.cache.has(ApprovedListRepository.key('count', countQuery(search)))
    ) {
      const { statement, window } = ApprovedListRepository.pageIds(search, limit, offset);
      const ids = await this.cache.get(
        ApprovedListRepository.key('page', statement),
        async () =>
          (
            await this.reader.read<{ id: number }>(
              statement.text,
              statement.params,
              listReadPlan(search),
            )
          ).map((row) => row.id),
        () => true,
      );
      return this.findByIds(window === null ? ids : ids.slice(offset, offset + limit), userId);
    }
    const { text, params } = pageQuery(search, userId, limit, offset);
    return this.reader.read<ListItemRow>(text, params, listReadPlan(search), 'iso');
  }

  /**
   * Approved libraries by id, in the order of `ids`. Prepared: what a memoised `q` or `search` page reads on every
   * request, whose planning (the 25 indexes of `libraries`) cost more than its 20 primary-key probes (at 1M, 0.6–0.9
   * → 0.2–0.3 pg CPU-ms); its one parameter is the id array, so the generic plan is kept.
   */
  private async findByIds(ids: number[], userId: number | null): Promise<ListItemRow[]> {
    if (!ids.length) return [];
    const { text, params } = byIdsQuery(ids, userId);
    const rows = await this.reader.read<ListItemRow>(text, params, 'generic', 'iso');
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }
}
