import { IsIn, IsString, Length, Matches } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';
import { DEVICE_ENVIRONMENTS, type DeviceEnvironment } from '../device-token.row.js';

export const DEVICE_TOKEN_PATTERN = /^[\x21-\x7e]+$/;

export class RegisterDeviceDto {
  /** The push token of this app install (visible ASCII, 1–512 characters). */
  @Trim()
  @IsString()
  @Length(1, 512)
  @Matches(DEVICE_TOKEN_PATTERN, { message: 'token must be visible ASCII characters' })
  token: string;

  @IsIn(DEVICE_ENVIRONMENTS)
  environment: DeviceEnvironment;
}
