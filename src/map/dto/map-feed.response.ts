import { ApiProperty, getSchemaPath } from '@nestjs/swagger';

export class PointGeometryResponse {
  @ApiProperty({ enum: ['Point'] })
  type!: 'Point';

  @ApiProperty({
    type: 'array',
    items: { type: 'number' },
    minItems: 2,
    maxItems: 2,
    description: '[longitude, latitude] in degrees',
    example: [13.405, 52.52],
  })
  coordinates!: [number, number];
}

/** A library: the public fields a map needs; its full record is `GET /api/v1/libraries/{slug}`. */
export class MapLibraryPropertiesResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  slug!: string;
  name!: string;
  city!: string;

  /** ISO 3166-1 alpha-2 */
  country!: string;

  /** Site-relative media path, "" when none. */
  thumbnail_url!: string;
}

export class MapClusterPropertiesResponse {
  @ApiProperty({ enum: [true] })
  cluster!: true;

  @ApiProperty({
    type: 'integer',
    minimum: 2,
    description: 'How many libraries the cluster holds.',
  })
  count!: number;

  @ApiProperty({
    type: 'array',
    items: { type: 'number' },
    minItems: 4,
    maxItems: 4,
    description: "The members' extent: [minLng, minLat, maxLng, maxLat]",
    example: [13.3, 52.45, 13.5, 52.55],
  })
  bbox!: [number, number, number, number];
}

export class MapLibraryFeatureResponse {
  @ApiProperty({ enum: ['Feature'] })
  type!: 'Feature';

  @ApiProperty({ type: PointGeometryResponse })
  geometry!: PointGeometryResponse;

  @ApiProperty({ type: MapLibraryPropertiesResponse })
  properties!: MapLibraryPropertiesResponse;
}

/** Libraries grouped in one grid cell, at their centroid. */
export class MapClusterFeatureResponse {
  @ApiProperty({ enum: ['Feature'] })
  type!: 'Feature';

  @ApiProperty({ type: PointGeometryResponse, description: "The members' centroid" })
  geometry!: PointGeometryResponse;

  @ApiProperty({ type: MapClusterPropertiesResponse })
  properties!: MapClusterPropertiesResponse;
}

/** GeoJSON (RFC 7946) FeatureCollection of the approved libraries in a box: libraries and clusters. */
export class MapFeedResponse {
  @ApiProperty({ enum: ['FeatureCollection'] })
  type!: 'FeatureCollection';

  @ApiProperty({
    type: 'array',
    maxItems: 2000,
    items: {
      oneOf: [
        { $ref: getSchemaPath(MapLibraryFeatureResponse) },
        { $ref: getSchemaPath(MapClusterFeatureResponse) },
      ],
    },
    description:
      'Ordered by grid row (north to south), then column (west to east). The counts of the clusters plus the ' +
      'library features add up to the matching approved libraries in the box.',
  })
  features!: (MapLibraryFeatureResponse | MapClusterFeatureResponse)[];
}
