import { IsBoolean, IsOptional, IsString } from 'class-validator';

export class DeleteAccountDto {
  /** Required for accounts with a local password. */
  @IsOptional()
  @IsString()
  password?: string;

  /** Social-only accounts confirm with `confirm_text: "DELETE"` or `confirm: true` (the iOS app's form). */
  @IsOptional()
  @IsString()
  confirm_text?: string;

  /** Social-only accounts: `true` confirms the deletion, like `confirm_text: "DELETE"`. */
  @IsOptional()
  @IsBoolean()
  confirm?: boolean;
}
