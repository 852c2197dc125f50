import { ApiProperty } from '@nestjs/swagger';

export class TokenPairResponse {
  /** Access token (JWT, 5 minutes). */
  access: string;

  /** Refresh token (JWT, 30 days; not rotated). */
  refresh: string;
}

export class AccessTokenResponse {
  /** A new access token for the same session. */
  access: string;
}

export class NotificationSettingsResponse {
  /** Emails about the user's submissions (approved, rejected, community photos). */
  email: boolean;
  /** Pushes to the user's registered devices (submissions; staff: moderation work waiting). */
  push: boolean;
}

export class UserResponse {
  @ApiProperty({ type: 'integer', example: 42 })
  id: number;
  username: string;
  /** "" for a social account whose provider did not verify an email. */
  email: string;
  /** True when the account has no local password (social sign-in only). */
  is_social_only: boolean;
  is_staff: boolean;

  /** The contributor agreement version the user accepted most recently; null when none. */
  @ApiProperty({ type: 'string', nullable: true, example: '2026-06' })
  contributor_agreement_version: string | null;

  /** Whether the user gets notices about their submissions by email and by push (security notices always go). */
  notifications: NotificationSettingsResponse;
}

/** `{message, details: null}`: the success answer of password change and account deletion. */
export class AccountMessageResponse {
  @ApiProperty({ example: 'Password changed successfully.' })
  message: string;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, example: null })
  details: null;
}
