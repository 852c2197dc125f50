import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { RefusedError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import { Database } from '../database/database.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { DuplicateUserError } from '../users/unique-violation.js';
import type { User } from '../users/user.row.js';
import { UsersRepository } from '../users/users.repository.js';
import { ContributorAgreementsRepository } from '../users/contributor-agreements.repository.js';
import { decideAgreement, type AgreementPolicy } from './contributor-agreement.js';
import { AUTH_MESSAGES } from './auth.messages.js';
import type { LoginDto } from './dto/login.dto.js';
import type { RefreshDto } from './dto/refresh.dto.js';
import type { RegisterDto } from './dto/register.dto.js';
import { isValidEmail, normalizeEmail } from './email.js';
import { checkPasswordPolicy } from './password-policy.js';
import { SessionsRepository } from './sessions.repository.js';
import { TokensService, type TokenPair } from './tokens.service.js';

/** Longer passwords (UTF-16 units) cannot belong to any account: no hash is computed for them. */
const MAX_LOGIN_PASSWORD_UNITS = 1024;

/** Register, log in, refresh: every successful sign-in opens a server-side session that its tokens belong to. */
@Injectable()
export class AuthService {
  /** Verified when no account matches a login, so a miss costs as much time as a wrong password. */
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: SessionsRepository,
    private readonly tokens: TokensService,
    private readonly hasher: PasswordHasher,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly agreements: ContributorAgreementsRepository,
    private readonly db: Database,
  ) {}

  async register(dto: RegisterDto): Promise<TokenPair> {
    const username = dto.username;
    const email = normalizeEmail(dto.email);
    const taken = await this.users.clashes(username, email);
    if (taken.username) throw new RefusedError(AUTH_MESSAGES.usernameExists);
    if (taken.email) throw new RefusedError(AUTH_MESSAGES.emailExists);
    if (!isValidEmail(email)) throw new RefusedError(AUTH_MESSAGES.invalidEmail);
    const violation = checkPasswordPolicy(dto.password, { username, email });
    if (violation) throw new RefusedError(violation);
    const agreement = decideAgreement(this.agreementPolicy(), dto, true);
    if (!agreement.ok) throw new RefusedError(agreement.message, agreement.details);

    const passwordHash = await this.hasher.hash(dto.password);
    try {
      // The account and its acceptance of the agreement exist together or not at all.
      const user = await this.db.transaction(async (tx) => {
        const created = await this.users.insert({ username, email, passwordHash }, tx);
        if (agreement.accept) {
          await this.agreements.record(created.id, agreement.accept, 'api', this.clock.date(), tx);
        }
        return created;
      });
      return await this.startSession(user.id);
    } catch (error) {
      if (error instanceof DuplicateUserError) {
        // A concurrent registration won. Both fields may clash; answer as the sequential checks would.
        const usernameTaken =
          error.field === 'username' || (await this.users.usernameExists(username));
        throw new RefusedError(
          usernameTaken ? AUTH_MESSAGES.usernameExists : AUTH_MESSAGES.emailExists,
        );
      }
      throw error;
    }
  }

  /** The contributor agreement in force (CONTRIBUTOR_AGREEMENT_VERSION / _REQUIRED). */
  agreementPolicy(): AgreementPolicy {
    const { version, required } = this.config.contributorAgreement;
    return { current: version, required };
  }

  async login(dto: LoginDto): Promise<TokenPair> {
    const user = await this.verifyCredentials(dto.username, dto.password);
    if (!user) throw new UnauthorizedError(AUTH_MESSAGES.invalidCredentials);
    return this.startSession(user.id);
  }

  /**
   * The active account that a username or email and password sign in, or null. A miss costs as much time as a
   * wrong password (a dummy hash is verified when no account has one).
   */
  async verifyCredentials(identifier: string, password: string): Promise<User | null> {
    const candidates =
      identifier && password.length <= MAX_LOGIN_PASSWORD_UNITS
        ? await this.users.loginCandidates(identifier)
        : [];
    let hashChecked = false;
    for (const user of candidates) {
      if (!user.passwordHash) continue;
      hashChecked = true;
      if ((await this.hasher.verify(user.passwordHash, password)) && user.isActive) return user;
    }
    if (!hashChecked) {
      await this.hasher.verify(
        await this.getDummyHash(),
        password.slice(0, MAX_LOGIN_PASSWORD_UNITS),
      );
    }
    return null;
  }

  /** Opens a server-side session (no tokens) for a sign-in that carries its own credential, e.g. the console. */
  async openSession(
    userId: number,
    ttlSeconds = this.config.jwt.refreshTtlSeconds,
  ): Promise<{ id: string; expiresAt: Date }> {
    const now = this.clock.date();
    const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
    const session = await this.sessions.open(userId, now, expiresAt);
    await this.users.recordLogin(userId, now);
    return { id: session.id, expiresAt: session.expiresAt };
  }

  /** A new access token for the refresh token's session, while the session and its user are live. */
  async refresh(dto: RefreshDto): Promise<{ access: string }> {
    const subject = await this.tokens.verify(dto.refresh, 'refresh');
    const now = this.clock.date();
    const session = subject
      ? await this.sessions.findLiveSessionUser(subject.sessionId, subject.userId, now)
      : null;
    if (!subject || !session) throw new UnauthorizedError(AUTH_MESSAGES.invalidRefresh);
    await this.sessions.touch(subject.sessionId, now);
    return {
      access: this.tokens.issueAccess(session.id, subject.sessionId, session.sessionExpiresAt),
    };
  }

  /** Opens a session for the user and answers its token pair. */
  async startSession(userId: number): Promise<TokenPair> {
    const session = await this.openSession(userId);
    return this.tokens.issuePair(userId, session.id, session.expiresAt);
  }

  private getDummyHash(): Promise<string> {
    this.dummyHash ??= this.hasher.hash(randomBytes(24).toString('base64url'));
    return this.dummyHash;
  }
}
