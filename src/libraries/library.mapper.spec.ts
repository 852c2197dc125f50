import { LocalMediaStorage } from '../common/media/local-media-storage.js';
import { LibraryMapper, publicLibraryFields } from './library.mapper.js';
import type { CommunityPhotoRow, LibraryRow, ListItemRow } from './library.row.js';

const media = new LocalMediaStorage('/nonexistent');
const mapper = new LibraryMapper(media);

/** The list item as it was built before issue 22: the public fields spread, then the coordinates and the flag. */
function spreadItem(row: ListItemRow) {
  const createdAt = typeof row.created_at === 'string' ? new Date(row.created_at) : row.created_at;
  return {
    ...publicLibraryFields({ ...row, created_at: createdAt }, (key) => media.url(key)),
    lat: Number(row.lat),
    lng: Number(row.lng),
    is_favourited: Boolean(row.is_favourited),
  };
}

const plain: ListItemRow = {
  id: 7,
  slug: 'berlin-kastanienallee-7',
  name: 'Bücherschrank Kastanienallee',
  description: 'Romane, Kinderbücher',
  photo_key: 'libraries/ab/abcd.jpg',
  thumbnail_key: 'libraries/ab/abcd-thumb.jpg',
  lat: 52.5386,
  lng: 13.4102,
  address: 'Kastanienallee 7',
  city: 'Berlin',
  country: 'DE',
  postal_code: '10435',
  wheelchair_accessible: 'yes',
  capacity: 120,
  is_indoor: false,
  is_lit: true,
  website: 'https://example.org/?a=1&b=2',
  contact: '',
  source: 'osm',
  operator: 'Bezirksamt',
  brand: '',
  created_at: new Date('2026-01-02T03:04:05.678Z'),
  is_favourited: true,
};

const shapes: [string, ListItemRow][] = [
  ['every field set', plain],
  [
    'nulls and empty media',
    {
      ...plain,
      photo_key: null,
      thumbnail_key: null,
      capacity: null,
      is_indoor: null,
      is_lit: null,
      wheelchair_accessible: '',
      is_favourited: false,
    },
  ],
  [
    'unicode, escapes and lone surrogates',
    {
      ...plain,
      name: '本棚 📚 «Bücher» "quoted" \\ back\\slash',
      description: 'line\nbreak\ttab\u0000nul\u001f \u2028 \u2029 lone \ud800 and \udfff',
      address: 'Ørstedsvej 3, Århus',
      city: 'Zürich',
      operator: '</script><script>',
      brand: '\u00e9\u0301',
    },
  ],
  [
    'coordinates as pg may return them, no flag column',
    {
      ...plain,
      lat: '-33.8688' as unknown as number,
      lng: '151.2093' as unknown as number,
      is_favourited: undefined as unknown as boolean,
      created_at: new Date('1999-12-31T23:59:59.000Z'),
    },
  ],
  [
    "created_at as the ISO text of PreparedReader's timestamps: 'iso'",
    { ...plain, created_at: '2026-01-02T03:04:05.678Z' },
  ],
];

describe('LibraryMapper.item', () => {
  it.each(shapes)('serialises exactly as the spread composition (%s)', (_name, row) => {
    const item = mapper.item(row);
    expect(JSON.stringify(item)).toBe(JSON.stringify(spreadItem(row)));
    expect(Object.keys(item)).toEqual(Object.keys(spreadItem(row)));
  });

  it('accepts a created_at that is not a Date', () => {
    const row = { ...plain, created_at: '2026-01-02T03:04:05.678Z' };
    expect(mapper.item(row).created_at).toBe('2026-01-02T03:04:05.678Z');
  });
});

describe('LibraryMapper.detail', () => {
  const photos: CommunityPhotoRow[] = [
    {
      id: 3,
      caption: 'Neu befüllt 📚',
      photo_key: 'community/aa/x.jpg',
      thumbnail_key: 'community/aa/x-t.jpg',
      created_at: new Date('2026-02-03T04:05:06.789Z'),
    },
  ];
  const row = {
    ...plain,
    status: 'approved',
    rejection_reason: '',
  } as unknown as LibraryRow;

  it('is the item and its photos, in that order', () => {
    const expected = {
      ...spreadItem(row),
      photos: [
        {
          id: 3,
          caption: 'Neu befüllt 📚',
          photo_url: '/media/community/aa/x.jpg',
          thumbnail_url: '/media/community/aa/x-t.jpg',
          created_at: '2026-02-03T04:05:06.789Z',
        },
      ],
    };
    expect(JSON.stringify(mapper.detail(row, photos))).toBe(JSON.stringify(expected));
  });

  it("adds the status and reason to the submitter's rejected library", () => {
    const rejected = { ...row, status: 'rejected', rejection_reason: 'Duplicate.' } as LibraryRow;
    expect(JSON.stringify(mapper.detail(rejected, []))).toBe(
      JSON.stringify({
        ...spreadItem(rejected),
        photos: [],
        status: 'rejected',
        rejection_reason: 'Duplicate.',
      }),
    );
  });
});
