import { IsOptional, IsString } from 'class-validator';

export class DeleteAccountDto {
  /** Required for accounts with a local password. */
  @IsOptional()
  @IsString()
  password?: string;

  /** Must be `DELETE` for social-only accounts. */
  @IsOptional()
  @IsString()
  confirm_text?: string;
}
