import { InvalidFieldsError } from '../common/errors/domain-errors.js';
import { MapFeedQueryDto } from './dto/map-feed.query.js';
import type { AppConfig } from '../config/app-config.js';
import type { MapMapper } from './map.mapper.js';
import type { MapFilters, MapRepository } from './map.repository.js';
import { MapService } from './map.service.js';

describe('MapService.feed', () => {
  const MAX = 1234;
  const query = (extra: Partial<MapFeedQueryDto>): MapFeedQueryDto =>
    Object.assign(new MapFeedQueryDto(), { bbox: '13,52,14,53', zoom: 9 }, extra);

  function serviceWith(answer: null | []) {
    const calls: { filters: MapFilters; maxMatches: number }[] = [];
    const repository = {
      findFeedCells: (_boxes: unknown, _level: number, filters: MapFilters, maxMatches: number) => {
        calls.push({ filters, maxMatches });
        return Promise.resolve(answer);
      },
    } as unknown as MapRepository;
    const config = { mapTextFilterMaxCandidates: MAX } as AppConfig;
    return { service: new MapService(repository, {} as MapMapper, config), calls };
  }

  it('asks the repository for at most MAP_TEXT_FILTER_MAX_CANDIDATES libraries, with the filters as given', async () => {
    const { service, calls } = serviceWith([]);
    await expect(service.feed(query({ search: 'kiez', has_photo: true }))).resolves.toEqual({
      type: 'FeatureCollection',
      features: [],
    });
    expect(calls).toEqual([
      {
        filters: expect.objectContaining({ search: 'kiez', hasPhoto: true }) as MapFilters,
        maxMatches: MAX,
      },
    ]);
  });

  it('refuses a text filter when both the box and the filter hold too many libraries: 422 too_many_matches at query.bbox', async () => {
    const { service } = serviceWith(null);
    const error = await service.feed(query({ q: 'books' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidFieldsError);
    expect((error as InvalidFieldsError).problems).toEqual([
      {
        loc: ['query', 'bbox'],
        msg: `bbox holds more than ${MAX} libraries and more than ${MAX} match q, search, city or postal_code: zoom in or narrow the filter`,
        type: 'too_many_matches',
      },
    ]);
  });
});
