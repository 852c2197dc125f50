import { ApiProperty } from '@nestjs/swagger';
import {
  IsInt,
  Max,
  Min,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { ToInt } from '../../common/validation/transforms.js';
import { MAX_ZOOM } from '../map-grid.js';

/** x and y of a tile are below 2^z (checked only once z itself is valid). */
@ValidatorConstraint({ name: 'tileIndex' })
class TileIndex implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const { z } = args.object as { z?: unknown };
    if (typeof z !== 'number' || !Number.isInteger(z) || z < 0 || z > MAX_ZOOM) return true;
    return typeof value === 'number' && value < 2 ** z;
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be less than 2^z`;
  }
}

/** `/libraries/tiles/{z}/{x}/{y}.mvt`: a tile of the XYZ (slippy map) scheme. */
export class TileParamsDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_ZOOM, description: 'Zoom.' })
  @ToInt()
  @IsInt()
  @Min(0)
  @Max(MAX_ZOOM)
  z!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Column, 0 ≤ x < 2^z (west to east).' })
  @ToInt()
  @IsInt()
  @Min(0)
  @Validate(TileIndex)
  x!: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Row, 0 ≤ y < 2^z (north to south).' })
  @ToInt()
  @IsInt()
  @Min(0)
  @Validate(TileIndex)
  y!: number;
}
