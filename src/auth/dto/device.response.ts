import { ApiProperty } from '@nestjs/swagger';
import { DEVICE_ENVIRONMENTS, type DeviceEnvironment } from '../device-token.row.js';

export class DeviceResponse {
  token: string;

  @ApiProperty({ enum: DEVICE_ENVIRONMENTS })
  environment: DeviceEnvironment;

  is_active: boolean;
}
