import { applyDecorators, Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiQuery,
  ApiNoContentResponse,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator.js';
import { DEFAULT_MAP_TEXT_FILTER_CANDIDATES } from '../config/app-config.js';
import { SharedCache } from '../common/http/cache-control.js';
import { ConditionalGet, EncodedBody } from '../common/http/conditional-get.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { MapFeedQueryDto } from './dto/map-feed.query.js';
import { DENSE_FEED_FEATURES } from './map-grid.js';
import {
  MapClusterFeatureResponse,
  MapFeedResponse,
  MapLibraryFeatureResponse,
} from './dto/map-feed.response.js';
import { TileParamsDto } from './dto/tile.params.js';
import { MapService } from './map.service.js';

export const GEOJSON = 'application/geo+json';
export const MVT = 'application/vnd.mapbox-vector-tile';

const ETAG_HEADER = {
  ETag: {
    description: 'Strong validator of the body; send it back in If-None-Match.',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: '`public, max-age=0, s-maxage=60`', schema: { type: 'string' } },
};
/**
 * The list's filters, as GET /libraries/ applies them (the DTO inherits their validation from the list's query
 * class, which carries no OpenAPI metadata of its own).
 */
const ListFilterQueries = () =>
  applyDecorators(
    ApiQuery({
      name: 'q',
      required: false,
      schema: { type: 'string', maxLength: 200 },
      description: 'Full text over name then description (accent- and case-insensitive).',
    }),
    ApiQuery({
      name: 'search',
      required: false,
      schema: { type: 'string', maxLength: 200 },
      description: 'Substring of name, description, city, address or postal code; wins over q.',
    }),
    ApiQuery({
      name: 'city',
      required: false,
      schema: { type: 'string', maxLength: 100 },
      description: 'Case-insensitive substring of the city.',
    }),
    ApiQuery({
      name: 'country',
      required: false,
      schema: { type: 'string', pattern: '^[A-Za-z]{2}$' },
      description: 'ISO 3166-1 alpha-2 code, case-insensitive.',
    }),
    ApiQuery({
      name: 'postal_code',
      required: false,
      schema: { type: 'string', maxLength: 20 },
      description: 'Substring of the postal code.',
    }),
    ApiQuery({
      name: 'has_photo',
      required: false,
      schema: { type: 'boolean' },
      description:
        'Only libraries with (true) or without (false) a primary or approved community photo.',
    }),
  );

const NOT_MODIFIED = {
  description: 'If-None-Match matched the current ETag; no body.',
  headers: ETAG_HEADER,
};

/**
 * The map: a clustered GeoJSON feed of a viewport and vector tiles. Literal routes under /libraries/, so the module
 * is registered before LibraryDetailModule (`map` and `tiles` are reserved slugs). Public, with the same answer for
 * every caller: shared caches keep it for a minute, browsers revalidate with the ETag.
 */
@ApiTags('map')
@ApiExtraModels(MapLibraryFeatureResponse, MapClusterFeatureResponse)
@Controller('libraries')
export class MapController {
  constructor(private readonly map: MapService) {}

  /** Approved libraries in a box as GeoJSON; where dense for the zoom, clusters at their members' centroid. */
  @Get('map')
  @Public()
  @RateLimit('map')
  @SharedCache(60)
  @ConditionalGet()
  @ApiOkResponse({
    description:
      'GeoJSON FeatureCollection: library features and cluster features, ordered by row then column of their ' +
      `cells: at most ~${DENSE_FEED_FEATURES} (a denser view is grouped one level coarser, see \`zoom\`), and at ` +
      'most ~2,000 from zoom 18 up, where cells stay ~76 m wide. `country` and ' +
      '`has_photo` are answered from the precomputed grid. A text filter (`q`, `search`, `city`, `postal_code`) ' +
      `reads the box's libraries when it holds at most ${DEFAULT_MAP_TEXT_FILTER_CANDIDATES.toLocaleString('en-US')} ` +
      '(`MAP_TEXT_FILTER_MAX_CANDIDATES`, the default), or ' +
      'the matches of the filter when at most as many match anywhere; otherwise the request is refused (422, type ' +
      '`too_many_matches` at `query.bbox`): zoom in or narrow the filter.',
    headers: ETAG_HEADER,
    content: { [GEOJSON]: { schema: { $ref: getSchemaPath(MapFeedResponse) } } },
  })
  @ApiExtraModels(MapFeedResponse)
  @ApiNotModifiedResponse(NOT_MODIFIED)
  @ListFilterQueries()
  async feed(@Query() query: MapFeedQueryDto): Promise<EncodedBody> {
    return EncodedBody.json(await this.map.feed(query), `${GEOJSON}; charset=utf-8`);
  }

  /**
   * A Mapbox Vector Tile (2.1) of the approved libraries: layer `libraries` (points with id, slug, name) and layer
   * `clusters` (points with count) where a cell of 1/8 of the tile holds several. Only libraries inside the tile.
   */
  @Get('tiles/:z/:x/:y.mvt')
  @Public()
  @RateLimit('map')
  @SharedCache(60)
  @ConditionalGet()
  @ApiOkResponse({
    description: 'The tile (MVT 2.1, extent 4096, no buffer).',
    headers: ETAG_HEADER,
    content: { [MVT]: { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiNoContentResponse({ description: 'No library in this tile.' })
  @ApiNotModifiedResponse(NOT_MODIFIED)
  async tile(@Param() params: TileParamsDto): Promise<EncodedBody | null> {
    const tile = await this.map.tile(params);
    return tile && new EncodedBody(tile, MVT);
  }
}
