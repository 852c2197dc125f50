import { ApiProperty, PickType } from '@nestjs/swagger';
import { IsDefined, IsInt, IsString, Matches, Max, Min, Validate } from 'class-validator';
import { ToInt, Trim } from '../../common/validation/transforms.js';
import { ListLibrariesQueryDto } from '../../libraries/dto/list-libraries.query.js';
import { MAX_ZOOM } from '../map-grid.js';
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
      'a quarter of a tile wide.',
    example: 12,
  })
  @IsDefined({ message: 'zoom is required' })
  @ToInt()
  @IsInt()
  @Min(0)
  @Max(MAX_ZOOM)
  zoom!: number;
}
