import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { ToInt } from '../validation/transforms.js';

export const MAX_PAGE_SIZE = 50;
export const DEFAULT_PAGE_SIZE = 20;

export class PaginationQueryDto {
  /** 1-indexed page; a page past the end returns the last page. */
  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(1)
  @ApiPropertyOptional({ type: 'integer' })
  page: number = 1;

  /** Items per page, 1–50. */
  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  @ApiPropertyOptional({ type: 'integer' })
  page_size: number = DEFAULT_PAGE_SIZE;
}

export class PaginationMeta {
  @ApiProperty({ type: 'integer' })
  page: number;
  @ApiProperty({ type: 'integer' })
  page_size: number;
  @ApiProperty({
    type: 'integer',
    description:
      'The exact number of matching items. On the public library list, a q, search, city or postal_code result of ' +
      '1,000 items or more may be up to 30 s old; other totals are read at every request.',
  })
  total: number;
  @ApiProperty({ type: 'integer' })
  total_pages: number;
  @ApiProperty() has_next: boolean;
  @ApiProperty() has_previous: boolean;
}

export interface Page<T> {
  items: T[];
  pagination: PaginationMeta;
}

export interface PageWindow {
  page: number;
  pageSize: number;
  offset: number;
  totalPages: number;
}

/** Where a requested page lands once the total is known: past the end means the last page. */
export function pageWindow(total: number, page: number, pageSize: number): PageWindow {
  const totalPages = Math.max(1, Math.ceil(total / pageSize));
  const effective = Math.min(Math.max(1, page), totalPages);
  return { page: effective, pageSize, offset: (effective - 1) * pageSize, totalPages };
}

export function toPage<T>(items: T[], total: number, window: PageWindow): Page<T> {
  return {
    items,
    pagination: {
      page: window.page,
      page_size: window.pageSize,
      total,
      total_pages: window.totalPages,
      has_next: window.page < window.totalPages,
      has_previous: window.page > 1,
    },
  };
}

/**
 * Runs a count and then a page fetch, clamping the page to the last one. Repositories supply both queries.
 */
export async function paginate<T>(
  query: { page: number; page_size: number },
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
): Promise<Page<T>> {
  const total = await count();
  const window = pageWindow(total, query.page, query.page_size);
  const items = total === 0 ? [] : await fetch(window.pageSize, window.offset);
  return toPage(items, total, window);
}

/**
 * paginate() for a source that reads the count and the requested page in one round trip. `countAndFetch` returns
 * the total and the page at the requested offset, or no rows when it could not read them (a memoised count);
 * `fetch` reads the page again when that page was past the end (the last page is served instead) or not read.
 */
export async function paginateTogether<T>(
  query: { page: number; page_size: number },
  countAndFetch: (limit: number, offset: number) => Promise<{ total: number; items?: T[] }>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
): Promise<Page<T>> {
  const requestedOffset = (Math.max(1, query.page) - 1) * query.page_size;
  const { total, items } = await countAndFetch(query.page_size, requestedOffset);
  const window = pageWindow(total, query.page, query.page_size);
  let page: T[] = [];
  if (total > 0)
    page =
      items !== undefined && window.offset === requestedOffset
        ? items
        : await fetch(window.pageSize, window.offset);
  return toPage(page, total, window);
}
