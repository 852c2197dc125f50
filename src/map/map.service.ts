import { Injectable } from '@nestjs/common';
import { InvalidFieldsError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import { parseBbox } from './dto/bbox.rule.js';
import type { MapFeedQueryDto } from './dto/map-feed.query.js';
import type { MapFeedResponse } from './dto/map-feed.response.js';
import type { TileParamsDto } from './dto/tile.params.js';
import {
  feedLevel,
  FINEST_COARSENED_LEVEL,
  MAX_FEED_CELLS,
  mayCoarsen,
  normalizeBbox,
} from './map-grid.js';
import { MapMapper } from './map.mapper.js';
import { MapRepository } from './map.repository.js';
import { encodeTile } from './tile-encoder.js';

/** PostGIS built without protobuf-c (PGlite's) has ST_AsMVT but refuses to run it. */
const NO_MVT_SUPPORT = /protobuf-c/i;

@Injectable()
export class MapService {
  /** Whether PostGIS encodes tiles (ST_AsMVT); learnt from the first tile. */
  private postgisMvt = true;

  /** MAP_TEXT_FILTER_MAX_CANDIDATES */
  private readonly maxCandidates: number;

  constructor(
    private readonly repository: MapRepository,
    private readonly mapper: MapMapper,
    config: AppConfig,
  ) {
    this.maxCandidates = config.mapTextFilterMaxCandidates;
  }

  /**
   * The approved (and matching) libraries in a box, dense ones clustered on the zoom's grid, or one level coarser
   * when the view holds more than DENSE_FEED_FEATURES non-empty cells.
   */
  async feed(query: MapFeedQueryDto): Promise<MapFeedResponse> {
    const values = parseBbox(query.bbox);
    if (!values) throw InvalidFieldsError.single(['query', 'bbox'], 'bbox is not a valid box');
    const boxes = normalizeBbox(...values);
    const level = feedLevel(boxes, query.zoom);
    if (level === null) {
      throw InvalidFieldsError.single(
        ['query', 'bbox'],
        `bbox is too large for zoom ${query.zoom}: from zoom 18 up it may span at most ${MAX_FEED_CELLS} cells of zoom ${FINEST_COARSENED_LEVEL} (about 3 km across)`,
        'bbox_too_large',
      );
    }
    const rows = await this.repository.findFeedCells(
      boxes,
      level,
      {
        q: query.q,
        search: query.search,
        city: query.city,
        country: query.country,
        postalCode: query.postal_code,
        hasPhoto: query.has_photo,
      },
      this.maxCandidates,
      mayCoarsen(level, query.zoom),
    );
    if (rows === null) {
      throw InvalidFieldsError.single(
        ['query', 'bbox'],
        `bbox holds more than ${this.maxCandidates} libraries and more than ${this.maxCandidates} match q, search, city or postal_code: zoom in or narrow the filter`,
        'too_many_matches',
      );
    }
    return { type: 'FeatureCollection', features: rows.map((row) => this.mapper.toFeature(row)) };
  }

  /** A vector tile of the approved libraries, or null when the tile holds none. */
  async tile({ z, x, y }: TileParamsDto): Promise<Buffer | null> {
    if (this.postgisMvt) {
      try {
        const { tile, libraries, clusters } = await this.repository.findTileMvt(z, x, y);
        return libraries + clusters === 0 ? null : tile;
      } catch (error) {
        if (!(error instanceof Error) || !NO_MVT_SUPPORT.test(error.message)) throw error;
        this.postgisMvt = false;
      }
    }
    const rows = await this.repository.findTileFeatures(z, x, y);
    return rows.length ? encodeTile(rows) : null;
  }
}
