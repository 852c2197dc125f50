import type { User } from '../users/user.row.js';
import type { DeviceToken } from './device-token.row.js';
import type { DeviceResponse } from './dto/device.response.js';
import type { AccountMessageResponse, UserResponse } from './dto/auth.response.js';

export function toUserResponse(
  user: User,
  contributorAgreementVersion: string | null,
): UserResponse {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    is_social_only: user.passwordHash === null,
    is_staff: user.isStaff,
    contributor_agreement_version: contributorAgreementVersion,
    notifications: { email: user.notifyEmail, push: user.notifyPush },
  };
}

export function toDeviceResponse(device: DeviceToken): DeviceResponse {
  return { token: device.token, environment: device.environment, is_active: device.isActive };
}

export function toMessageResponse(message: string): AccountMessageResponse {
  return { message, details: null };
}
