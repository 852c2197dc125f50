import { fromVectorTileJs } from '@maplibre/vt-pbf';
import { TILE_EXTENT } from './map-grid.js';
import type { TileFeatureRow } from './map.repository.js';

/**
 * The parts of vector-tile-js's feature that the writer reads. Declared here because @maplibre/vt-pbf's type
 * declarations import their own files without extensions, which `nodenext` resolution cannot follow (its types
 * arrive as unresolved).
 */
interface TileFeature {
  type: 1;
  id: undefined;
  extent: number;
  properties: Record<string, string | number>;
  loadGeometry: () => { x: number; y: number }[][];
}

const layer = (name: string, features: TileFeature[]) => ({
  version: 2,
  name,
  extent: TILE_EXTENT,
  length: features.length,
  feature: (i: number) => features[i],
});

const point = (row: TileFeatureRow, properties: TileFeature['properties']): TileFeature => ({
  type: 1,
  id: undefined,
  extent: TILE_EXTENT,
  properties,
  loadGeometry: () => [[{ x: row.px, y: row.py }]],
});

/**
 * The same tile as ST_AsMVT writes it (layers `libraries` and `clusters`, MVT 2.1), encoded in Node by MapLibre's
 * writer, for a PostGIS built without protobuf-c (the embedded PGlite database). Empty layers are left out.
 */
export function encodeTile(rows: TileFeatureRow[]): Buffer {
  const libraries = rows
    .filter((row) => row.n === 1)
    .map((row) => point(row, { id: row.id, slug: row.slug ?? '', name: row.name ?? '' }));
  const clusters = rows.filter((row) => row.n > 1).map((row) => point(row, { count: row.n }));
  const layers: Record<string, ReturnType<typeof layer>> = {};
  if (libraries.length) layers.libraries = layer('libraries', libraries);
  if (clusters.length) layers.clusters = layer('clusters', clusters);
  return Buffer.from(fromVectorTileJs({ layers }));
}
