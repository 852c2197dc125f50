import { SetMetadata } from '@nestjs/common';
import type { RateLimitTier } from '../../config/app-config.js';

export const RATE_LIMIT_KEY = 'bookcase:rate-limit';

export interface RateLimitSpec {
  tier: RateLimitTier;
  /** Endpoints naming the same bucket share one counter (favourite POST and DELETE do). */
  bucket?: string;
}

/** The API's login and the staff console's sign-in count against one counter per client. */
export const PASSWORD_LOGIN_BUCKET = 'password-login';

/** Every route names its tier; the app refuses to start if one does not (see RateLimitRouteAudit). */
export const RateLimit = (tier: RateLimitTier, options: { bucket?: string } = {}) =>
  SetMetadata(RATE_LIMIT_KEY, { tier, bucket: options.bucket } satisfies RateLimitSpec);

/** An explicit opt-out, for liveness and readiness probes only. */
export const NoRateLimit = () => SetMetadata(RATE_LIMIT_KEY, 'none');
