import { IsBoolean, ValidateIf } from 'class-validator';

/** Either or both; a key left out keeps its value. */
export class UpdateNotificationSettingsDto {
  /** Emails about the user's submissions. */
  @ValidateIf((dto: UpdateNotificationSettingsDto) => dto.email !== undefined)
  @IsBoolean()
  email?: boolean;

  /** Pushes to the user's devices. */
  @ValidateIf((dto: UpdateNotificationSettingsDto) => dto.push !== undefined)
  @IsBoolean()
  push?: boolean;
}
