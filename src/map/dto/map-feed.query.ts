import { ApiProperty, PickType } from '@nestjs/swagger';
import { IsDefined, IsInt, IsString, Matches, Max, Min, Validate } from 'class-validator';
import { ToInt, Trim } from '../../common/validation/transforms.js';
import { ListLibrariesQueryDto } from '../../libraries/dto/list-libraries.query.js';
import { DENSE_FEED_FEATURES, MAX_ZOOM } from '../map-grid.js';
import { BBOX_PATTERN, BboxValues } from './bbox.rule.js';

/** The map feed's query: a box, a zoom, and the list's filters with the list's rules. */
export class MapFeedQueryDto extends PickType(ListLibrariesQueryDto, [
  'q',
  'search',
  'city',
  'country',
  'postal_code',
  'has_photo',
] as const) {
  @ApiProperty({
    description:
      '`minLng,minLat,maxLng,maxLat` in degrees (WGS 84). `minLng > maxLng` crosses the antimeridian; longitudes ' +
      'past ±180 wrap, a box 360° wide or more is the whole world, latitudes are clamped to ±90. ' +
      '`minLat` must not exceed `maxLat`.',
    example: '13.2,52.4,13.6,52.6',
  })
  @IsDefined({ message: 'bbox is required' })
  @Trim()
  @IsString()
  @Matches(BBOX_PATTERN, {
    message: 'bbox must be four comma-separated numbers: minLng,minLat,maxLng,maxLat',
  })
  @Validate(BboxValues)
  bbox!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: MAX_ZOOM,
    description:
      'Map zoom (256-pixel tiles; MapLibre shows this at its zoom − 1). Libraries are grouped in a grid of cells ' +
      'a quarter of a tile wide (64 px), coarser for a box of more than 2,000 such cells. A view that would hold ' +
      `more than ${DENSE_FEED_FEATURES} non-empty cells (larger than a desktop screen over a dense city) is ` +
      'grouped in cells half a tile wide (128 px) instead; from zoom 18 up the cells are never wider than ~76 m at ' +
      'the equator, so libraries 200 m apart are never clustered.',
    example: 12,
  })
  @IsDefined({ message: 'zoom is required' })
  @ToInt()
  @IsInt()
  @Min(0)
  @Max(MAX_ZOOM)
  zoom!: number;
}
