import { IsString } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';

export class LoginDto {
  /** Username or email (case-insensitive, trimmed). */
  @Trim()
  @IsString()
  username: string;

  @IsString()
  password: string;
}
