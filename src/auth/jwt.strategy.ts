import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request, Response } from 'express';
import passport, { type PassportStatic } from 'passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { Clock } from '../common/clock.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsRepository } from './sessions.repository.js';
import { JWT_ALGORITHM, jwtKey, TokensService } from './tokens.service.js';

export const JWT_STRATEGY = 'jwt';

/** Each strategy registers with a Passport of its own, so two apps in one process never share strategies. */
const passports = new WeakMap<object, PassportStatic>();

/**
 * Bearer access tokens: passport-jwt checks the HS256 signature; `validate` checks the claims (type, expiry by
 * the Clock) and reads the database: the session must be live and its user active.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  constructor(
    config: AppConfig,
    private readonly tokens: TokensService,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // A KeyObject (see jwtKey): passport-jwt hands it to jsonwebtoken unchanged; its types predate KeyObject.
      secretOrKey: jwtKey(config.jwt.secret) as unknown as Buffer,
      algorithms: [JWT_ALGORITHM],
      // Expiry is checked in validate() against the injected Clock.
      ignoreExpiration: true,
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

  async validate(payload: unknown): Promise<AuthUser | false> {
    const subject = this.tokens.readClaims(payload, 'access');
    if (!subject) return false;
    const user = await this.sessions.findLiveSessionUser(
      subject.sessionId,
      subject.userId,
      this.clock.date(),
    );
    if (!user) return false;
    return {
      id: user.id,
      username: user.username,
      isStaff: user.isStaff,
      sessionId: subject.sessionId,
    };
  }

  /** The caller of this request, or null when the token is missing or not acceptable. */
  authenticateRequest(request: Request, response: Response): Promise<AuthUser | null> {
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
