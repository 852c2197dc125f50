import { IsString } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';

export class ChangeEmailDto {
  /** The new email address (3–254 characters); trimmed and stored lower-case. */
  @Trim()
  @IsString()
  email: string;
}
