import { IsString } from 'class-validator';

export class ChangePasswordDto {
  @IsString()
  current_password: string;

  /** 8–128 characters, checked against the password policy. */
  @IsString()
  new_password: string;

  /** Must equal new_password. */
  @IsString()
  new_password_confirm: string;
}
