export const DEVICE_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type DeviceEnvironment = (typeof DEVICE_ENVIRONMENTS)[number];

/**
 * A push notification token (table `device_tokens`), held by one user at a time. `sessionId` is the login that
 * registered it: while that session is live, another account cannot take the token over.
 */
export interface DeviceToken {
  id: number;
  token: string;
  environment: DeviceEnvironment;
  isActive: boolean;
  userId: number;
  sessionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The select list that reads a row of `device_tokens` (aliased `d`) as a `DeviceToken`. */
export const DEVICE_TOKEN_COLUMNS = `d.id, d.token, d.environment, d.is_active AS "isActive", d.user_id AS "userId",
  d.session_id AS "sessionId", d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;
