import { Injectable } from '@nestjs/common';
import { MediaStorage } from '../common/media/media-storage.js';
import type {
  MapClusterFeatureResponse,
  MapLibraryFeatureResponse,
} from './dto/map-feed.response.js';
import type { MapCellRow } from './map.repository.js';

/** Centroids are sums of floating-point numbers in whatever order PostgreSQL adds them: 7 decimals (~1 cm) keep the output byte-identical. */
const round = (value: number) => Math.round(value * 1e7) / 1e7;

/** Decides every field of a map feature: public library fields only, never status, creator or permission. */
@Injectable()
export class MapMapper {
  constructor(private readonly media: MediaStorage) {}

  toFeature(row: MapCellRow): MapLibraryFeatureResponse | MapClusterFeatureResponse {
    if (row.n === 1) {
      return {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [row.lng, row.lat] },
        properties: {
          id: row.id,
          slug: row.slug ?? '',
          name: row.name ?? '',
          city: row.city ?? '',
          country: row.country ?? '',
          thumbnail_url: this.media.url(row.thumbnail_key),
        },
      };
    }
    return {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [round(row.lng), round(row.lat)] },
      properties: {
        cluster: true,
        count: row.n,
        // A one-member extent is its point (the repository sends extents of clusters only).
        bbox: [
          row.west ?? row.lng,
          row.south ?? row.lat,
          row.east ?? row.lng,
          row.north ?? row.lat,
        ],
      },
    };
  }
}
