import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { SocialProvider } from './social-provider.js';

/** What a verified identity token says about the person signing in. */
export interface IdentityClaims {
  subject: string;
  /** Lower-cased; null when the token carries none. */
  email: string | null;
  /** The provider asserts the email belongs to this person (`email_verified` true or "true"). */
  emailVerified: boolean;
  givenName: string | null;
  familyName: string | null;
  /** Identifies this token for the replay guard: its `jti`, else a hash of the whole token. */
  replayKey: string;
  /** When the token stops being accepted (exp plus the leeway), in ms. */
  acceptedUntilMs: number;
}

export const IDENTITY_TOKEN_ALGORITHMS = ['RS256', 'ES256'];
export const IDENTITY_TOKEN_LEEWAY_SECONDS = 60;
export const JWKS_TIMEOUT_MS = 5000;
const MAX_TOKEN_LENGTH = 16_384;
const MAX_SUBJECT_LENGTH = 255;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * Verifies Apple / Google id tokens with jose against the provider's JWKS (key chosen by `kid`, RS256/ES256),
 * issuer, audience (the configured client ids) and expiry with 60 s of leeway. Any failure — unconfigured
 * provider, bad signature or claims, no `kid`, JWKS unreachable — is answered with null, never thrown.
 */
@Injectable()
export class IdentityTokenVerifier {
  private readonly logger = new Logger(IdentityTokenVerifier.name);
  private readonly keySets = new Map<SocialProvider, JWTVerifyGetKey>();

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  async verify(provider: SocialProvider, token: string): Promise<IdentityClaims | null> {
    const settings = this.config.social[provider];
    if (!settings.clientIds.length || token.length > MAX_TOKEN_LENGTH) return null;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.kid !== 'string' || header.kid === '') return null;
      if (!IDENTITY_TOKEN_ALGORITHMS.includes(String(header.alg))) return null;
      const { payload } = await jwtVerify(token, this.keySet(provider), {
        issuer: this.issuers(provider),
        audience: settings.clientIds,
        algorithms: IDENTITY_TOKEN_ALGORITHMS,
        clockTolerance: IDENTITY_TOKEN_LEEWAY_SECONDS,
        currentDate: this.clock.date(),
        requiredClaims: ['sub', 'exp'],
      });
      const subject = text(payload.sub);
      if (!subject || subject.length > MAX_SUBJECT_LENGTH || typeof payload.exp !== 'number')
        return null;
      const jti = text(payload.jti);
      const email = text(payload.email)?.toLowerCase() ?? null;
      return {
        subject,
        email,
        emailVerified:
          email !== null && (payload.email_verified === true || payload.email_verified === 'true'),
        givenName: text(payload.given_name),
        familyName: text(payload.family_name),
        replayKey: `${provider}:${jti ? `jti:${sha256(jti)}` : `tok:${sha256(token)}`}`,
        acceptedUntilMs: (payload.exp + IDENTITY_TOKEN_LEEWAY_SECONDS) * 1000,
      };
    } catch (error) {
      this.logger.debug(`${provider} identity token refused: ${(error as Error)?.name ?? 'error'}`);
      return null;
    }
  }

  /** The configured issuer; Google's tokens may also name it without the scheme (`accounts.google.com`). */
  private issuers(provider: SocialProvider): string[] {
    const issuer = this.config.social[provider].issuer;
    if (provider === 'google' && issuer.startsWith('https://'))
      return [issuer, issuer.slice('https://'.length)];
    return [issuer];
  }

  private keySet(provider: SocialProvider): JWTVerifyGetKey {
    let keySet = this.keySets.get(provider);
    if (!keySet) {
      keySet = createRemoteJWKSet(new URL(this.config.social[provider].jwksUrl), {
        timeoutDuration: JWKS_TIMEOUT_MS,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
      });
      this.keySets.set(provider, keySet);
    }
    return keySet;
  }
}
