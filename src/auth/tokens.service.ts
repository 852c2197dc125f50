import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';

export type TokenType = 'access' | 'refresh';

/**
 * The HS256 key as a KeyObject, made once. Given the secret as a string, jsonwebtoken first tries to read it as a
 * public or private key on every verify and sign, and the failed attempt (an exception) cost 0.4 ms of CPU per
 * authenticated request, a fifth of the favourites page (issue 7's benchmark). The key is the same bytes, so tokens
 * signed either way verify either way.
 */
export function jwtKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/** The claims of our JWTs (decisions §3). */
export interface TokenClaims {
  sub: string;
  sid: string;
  typ: TokenType;
  jti: string;
  iat: number;
  exp: number;
}

export interface TokenPair {
  access: string;
  refresh: string;
}

/** A token's subject and session, once its signature, type and expiry have been checked. */
export interface TokenSubject {
  userId: number;
  sessionId: string;
}

export const JWT_ALGORITHM = 'HS256';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_USER_ID = 2_147_483_647;

/** Issues and reads the HS256 access/refresh tokens. Time comes from the injected Clock. */
@Injectable()
export class TokensService {
  constructor(
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** A refresh token lasting as long as its session, and a fresh access token. */
  issuePair(userId: number, sessionId: string, sessionExpiresAt: Date): TokenPair {
    return {
      access: this.issueAccess(userId, sessionId, sessionExpiresAt),
      refresh: this.sign(
        userId,
        sessionId,
        'refresh',
        Math.floor(sessionExpiresAt.getTime() / 1000),
      ),
    };
  }

  /** An access token, never outliving its session. */
  issueAccess(userId: number, sessionId: string, sessionExpiresAt: Date): string {
    const exp = Math.min(
      this.nowSeconds() + this.config.jwt.accessTtlSeconds,
      Math.floor(sessionExpiresAt.getTime() / 1000),
    );
    return this.sign(userId, sessionId, 'access', exp);
  }

  private sign(userId: number, sessionId: string, typ: TokenType, exp: number): string {
    const claims: TokenClaims = {
      sub: String(userId),
      sid: sessionId,
      typ,
      jti: randomUUID(),
      iat: this.nowSeconds(),
      exp,
    };
    return this.jwt.sign(claims, { algorithm: JWT_ALGORITHM });
  }

  /** Verifies signature and algorithm, then the claims; null for anything not a live token of this type. */
  async verify(token: string, typ: TokenType): Promise<TokenSubject | null> {
    if (!token) return null;
    try {
      const payload = await this.jwt.verifyAsync<Record<string, unknown>>(token, {
        algorithms: [JWT_ALGORITHM],
        ignoreExpiration: true,
      });
      return this.readClaims(payload, typ);
    } catch {
      return null;
    }
  }

  /** Checks verified claims: type, subject, session id and expiry against the Clock. */
  readClaims(payload: unknown, typ: TokenType): TokenSubject | null {
    if (!payload || typeof payload !== 'object') return null;
    const claims = payload as Partial<Record<keyof TokenClaims, unknown>>;
    if (claims.typ !== typ) return null;
    if (typeof claims.exp !== 'number' || claims.exp <= this.nowSeconds()) return null;
    if (typeof claims.sub !== 'string' || !/^[1-9]\d{0,9}$/.test(claims.sub)) return null;
    const userId = Number(claims.sub);
    if (userId > MAX_USER_ID) return null;
    if (typeof claims.sid !== 'string' || !UUID.test(claims.sid)) return null;
    return { userId, sessionId: claims.sid };
  }
}
