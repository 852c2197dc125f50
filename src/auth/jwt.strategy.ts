import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request, Response } from 'express';
import passport, { type PassportStatic } from 'passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/auth/auth-user.js';
import { AppConfig } from '../config/app-config.js';
import { SessionChecks } from './session-checks.js';
import { JWT_ALGORITHM, jwtKey, TokensService } from './tokens.service.js';
import { VerifiedTokens } from './verified-tokens.js';

export const JWT_STRATEGY = 'jwt';

/** Each strategy registers with a Passport of its own, so two apps in one process never share strategies. */
const passports = new WeakMap<object, PassportStatic>();

/** passport-jwt's own extractor: `Authorization: Bearer <token>` (scheme in any case). */
const bearerToken = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * Bearer access tokens: passport-jwt checks the HS256 signature, once per token string (VerifiedTokens remembers
 * the tokens it accepted); `validate` checks the claims (type, expiry by the Clock) and reads the database on every
 * request: the session must be live and its user active.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  /** Tokens whose signature passport-jwt verified, with their claims. */
  readonly verified = new VerifiedTokens();

  constructor(
    config: AppConfig,
    private readonly tokens: TokensService,
    private readonly sessionChecks: SessionChecks,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // A KeyObject (see jwtKey): passport-jwt hands it to jsonwebtoken unchanged; its types predate KeyObject.
      secretOrKey: jwtKey(config.jwt.secret) as unknown as Buffer,
      algorithms: [JWT_ALGORITHM],
      // Expiry is checked in validate() against the injected Clock.
      ignoreExpiration: true,
      // validate() reads the token again to remember it once its signature checked out.
      passReqToCallback: true,
    });
  }

  getPassportInstance(): PassportStatic {
    let instance = passports.get(this);
    if (!instance) {
      instance = new passport.Passport() as PassportStatic;
      passports.set(this, instance);
    }
    return instance;
  }

  /** passport-jwt's callback, once the token's signature and algorithm are verified. */
  async validate(request: Request, payload: unknown): Promise<AuthUser | false> {
    const token = bearerToken(request);
    // jsonwebtoken would check a `nbf` again on each use (our tokens have none): such a token is never remembered.
    if (
      token &&
      payload !== null &&
      typeof payload === 'object' &&
      !('nbf' in payload) &&
      this.tokens.readClaims(payload, 'access')
    )
      this.verified.remember(token, payload);
    return this.userOf(payload);
  }

  /** The caller of verified claims: an access token, not expired, of a live session of an active user. */
  private async userOf(payload: unknown): Promise<AuthUser | false> {
    const subject = this.tokens.readClaims(payload, 'access');
    if (!subject) return false;
    const user = await this.sessionChecks.liveSessionUser(subject.sessionId, subject.userId);
    if (!user) return false;
    return {
      id: user.id,
      username: user.username,
      isStaff: user.isStaff,
      sessionId: subject.sessionId,
    };
  }

  /** The caller of this request, or null when the token is missing or not acceptable. */
  async authenticateRequest(request: Request, response: Response): Promise<AuthUser | null> {
    const token = bearerToken(request);
    const claims = token ? this.verified.get(token) : undefined;
    if (token && claims !== undefined) {
      // Verified before: only the claims and the session are checked (errors, e.g. a database that is down, are
      // raised as on the first use). An expired token is forgotten.
      const user = await this.userOf(claims);
      if (!user && !this.tokens.readClaims(claims, 'access')) this.verified.forget(token);
      return user || null;
    }
    return new Promise((resolve, reject) => {
      const middleware = this.getPassportInstance().authenticate(
        JWT_STRATEGY,
        { session: false },
        (error: unknown, user: AuthUser | false | undefined) => {
          if (error) reject(asError(error));
          else resolve(user || null);
        },
      ) as (req: Request, res: Response, next: (error?: unknown) => void) => void;
      middleware(request, response, (error?: unknown) => {
        if (error) reject(asError(error));
        else resolve(null);
      });
    });
  }
}

/**
 * The failure as it was (an object keeps its `code`, e.g. a database that is restarting → 503); anything else wrapped.
 * Not `instanceof Error`: errors raised by Node's own modules may come from another realm (vm contexts).
 */
function asError(error: unknown): Error {
  return typeof error === 'object' && error !== null
    ? (error as Error)
    : new Error('authentication failed');
}
