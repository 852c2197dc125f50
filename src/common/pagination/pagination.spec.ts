import { paginate, paginateTogether } from './pagination.js';

describe('paginateTogether', () => {
  const letters = 'abcdefg'.split('');
  const read = (limit: number, offset: number) => letters.slice(offset, offset + limit);

  function source(options: { keepItems: boolean } = { keepItems: true }) {
    const calls: string[] = [];
    return {
      calls,
      countAndFetch: async (limit: number, offset: number) => {
        calls.push(`both ${limit}@${offset}`);
        return {
          total: letters.length,
          items: options.keepItems ? read(limit, offset) : undefined,
        };
      },
      fetch: async (limit: number, offset: number) => {
        calls.push(`page ${limit}@${offset}`);
        return read(limit, offset);
      },
    };
  }

  it('serves the page read with the count, in one call', async () => {
    const s = source();
    const page = await paginateTogether({ page: 2, page_size: 3 }, s.countAndFetch, s.fetch);
    expect(page.items).toEqual(['d', 'e', 'f']);
    expect(page.pagination).toMatchObject({ page: 2, total: 7, total_pages: 3, has_next: true });
    expect(s.calls).toEqual(['both 3@3']);
  });

  it('reads the last page again when the requested one is past the end', async () => {
    const s = source();
    const page = await paginateTogether({ page: 9, page_size: 3 }, s.countAndFetch, s.fetch);
    expect(page.items).toEqual(['g']);
    expect(page.pagination).toMatchObject({ page: 3, has_next: false, has_previous: true });
    expect(s.calls).toEqual(['both 3@24', 'page 3@6']);
  });

  it('reads the page when only the count came back', async () => {
    const s = source({ keepItems: false });
    const page = await paginateTogether({ page: 1, page_size: 3 }, s.countAndFetch, s.fetch);
    expect(page.items).toEqual(['a', 'b', 'c']);
    expect(s.calls).toEqual(['both 3@0', 'page 3@0']);
  });

  it('answers the same as paginate', async () => {
    for (const query of [1, 2, 3, 4].map((page) => ({ page, page_size: 3 }))) {
      const s = source();
      const together = await paginateTogether(query, s.countAndFetch, s.fetch);
      const apart = await paginate(query, async () => letters.length, s.fetch);
      expect(together).toEqual(apart);
    }
  });

  it('answers an empty page without reading it again when nothing matches', async () => {
    let fetched = 0;
    const page = await paginateTogether(
      { page: 3, page_size: 3 },
      async () => ({ total: 0, items: [] as string[] }),
      async () => {
        fetched += 1;
        return [];
      },
    );
    expect(page.items).toEqual([]);
    expect(page.pagination).toMatchObject({ page: 1, total: 0, total_pages: 1 });
    expect(fetched).toBe(0);
  });
});
