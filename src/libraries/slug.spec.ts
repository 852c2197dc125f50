import { baseSlug, slugCandidate } from './slug.js';

describe('baseSlug', () => {
  it.each([
    [
      { city: 'Berlin', address: 'Lindenstraße 12', name: 'Bücherschrank am Park' },
      'berlin-lindenstrasse-12-bucherschrank-am-park',
    ],
    [{ city: 'Köln', address: 'Domplatz 1', name: '' }, 'koln-domplatz-1'],
    [{ city: 'Zürich', address: '', name: '  ' }, 'zurich'],
    [
      { city: 'São Paulo', address: 'Rua Água, 5', name: 'Troca-Troca!' },
      'sao-paulo-rua-agua-5-troca-troca',
    ],
  ])('%j → %s', (parts, expected) => {
    expect(baseSlug(parts)).toBe(expected);
  });

  it('never yields a reserved route word or an empty slug', () => {
    expect(baseSlug({ city: 'Latest' })).toBe('latest-library');
    expect(baseSlug({ city: 'mine' })).toBe('mine-library');
    expect(baseSlug({ city: 'Audit' })).toBe('audit-library');
    expect(baseSlug({ city: 'Moderation' })).toBe('moderation-library');
    expect(baseSlug({ city: 'Map' })).toBe('map-library');
    expect(baseSlug({ city: 'tiles' })).toBe('tiles-library');
    expect(baseSlug({ city: 'Export' })).toBe('export-library');
    expect(baseSlug({ city: '東京' })).toBe('library');
  });

  it('caps the length on a word boundary', () => {
    const slug = baseSlug({ city: 'City', address: 'word '.repeat(80), name: '' });
    expect(slug.length).toBeLessThanOrEqual(200);
    expect(slug.endsWith('-')).toBe(false);
  });
});

describe('slugCandidate', () => {
  it('numbers from -2 on', () => {
    expect([1, 2, 3].map((n) => slugCandidate('berlin', n))).toEqual([
      'berlin',
      'berlin-2',
      'berlin-3',
    ]);
  });
});
