import { IsString, MaxLength } from 'class-validator';

export class PasswordResetRequestDto {
  /** The account's email address (3–254 characters). */
  @IsString()
  @MaxLength(254)
  email: string;
}

export class PasswordResetConfirmDto {
  /** The token from the link in the email. */
  @IsString()
  @MaxLength(200)
  token: string;

  /** 8–128 characters, checked against the password policy. */
  @IsString()
  new_password: string;

  /** Must equal new_password. */
  @IsString()
  new_password_confirm: string;
}
