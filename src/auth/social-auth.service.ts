import { Injectable, Logger } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { RefusedError } from '../common/errors/domain-errors.js';
import { ContributorAgreementsRepository } from '../users/contributor-agreements.repository.js';
import { DuplicateUserError } from '../users/unique-violation.js';
import type { User } from '../users/user.row.js';
import { UsersRepository } from '../users/users.repository.js';
import { AUTH_MESSAGES } from './auth.messages.js';
import { AuthService } from './auth.service.js';
import {
  AGREEMENT_MESSAGES,
  agreementFieldsMismatched,
  decideAgreement,
  type AgreementInput,
} from './contributor-agreement.js';
import type { SocialLoginDto } from './dto/social-login.dto.js';
import { IdentityTokenReplayStore } from './identity-token-replay.store.js';
import { IdentityTokenVerifier, type IdentityClaims } from './identity-token.verifier.js';
import {
  IdentityAlreadyLinkedError,
  SocialIdentitiesRepository,
} from './social-identities.repository.js';
import { SOCIAL_PROVIDERS, type SocialProvider } from './social-provider.js';
import type { TokenPair } from './tokens.service.js';
import { usernameBase, usernameCandidates, withSuffix } from './username.js';

const NAME_MAX_LENGTH = 150;
/** Concurrent sign-ins can race on the identity, the username or the email; each lost race is retried. */
const MAX_ATTEMPTS = 5;
const USERNAME_CANDIDATES = 20;

interface Names {
  firstName: string;
  lastName: string;
}

function isProvider(value: string): value is SocialProvider {
  return (SOCIAL_PROVIDERS as readonly string[]).includes(value);
}

function clip(value: string | null | undefined): string {
  return Array.from((value ?? '').trim())
    .slice(0, NAME_MAX_LENGTH)
    .join('');
}

/**
 * Sign-in with an Apple / Google identity token. The first sign-in creates an account (or links the one holding
 * the same email, only when the provider verified it); later sign-ins with the same provider + subject return it.
 * A new account gets the email only when verified, else '' — an unverified address is never stored, so it can
 * neither block its real owner from registering nor be linked to later.
 */
@Injectable()
export class SocialAuthService {
  private readonly logger = new Logger(SocialAuthService.name);

  constructor(
    private readonly verifier: IdentityTokenVerifier,
    private readonly replays: IdentityTokenReplayStore,
    private readonly identities: SocialIdentitiesRepository,
    private readonly users: UsersRepository,
    private readonly auth: AuthService,
    private readonly agreements: ContributorAgreementsRepository,
    private readonly clock: Clock,
  ) {}

  async signIn(dto: SocialLoginDto): Promise<TokenPair> {
    if (!isProvider(dto.provider)) throw new RefusedError(AUTH_MESSAGES.unsupportedProvider);
    // A malformed pair is refused before the identity token is spent (its jti can be used once).
    if (agreementFieldsMismatched(dto)) throw new RefusedError(AGREEMENT_MESSAGES.together);
    const claims = await this.verifier.verify(dto.provider, dto.id_token);
    if (!claims || !(await this.claimOnce(claims)))
      throw new RefusedError(AUTH_MESSAGES.invalidIdentityToken);
    const names: Names = {
      firstName: clip(dto.first_name || claims.givenName),
      lastName: clip(dto.last_name || claims.familyName),
    };
    const user = await this.resolveUser(dto.provider, claims, names, dto);
    if (!user.isActive) throw new RefusedError(AUTH_MESSAGES.invalidIdentityToken);
    return this.auth.startSession(user.id);
  }

  /** An existing account (known identity or linked by email) records a valid acceptance and is never refused. */
  private async recordForExisting(userId: number, input: AgreementInput): Promise<void> {
    const decision = decideAgreement(this.auth.agreementPolicy(), input, false);
    if (decision.ok && decision.accept) {
      await this.agreements.record(userId, decision.accept, 'api', this.clock.date());
    }
  }

  /** The replay guard: false when this token was used before (or the store cannot tell). */
  private async claimOnce(claims: IdentityClaims): Promise<boolean> {
    try {
      return await this.replays.claim(claims.replayKey, claims.acceptedUntilMs);
    } catch (error) {
      this.logger.error(`identity token replay store failed: ${(error as Error).message}`);
      return false;
    }
  }

  private async resolveUser(
    provider: SocialProvider,
    claims: IdentityClaims,
    names: Names,
    agreement: AgreementInput,
  ): Promise<User> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const known = await this.identities.findUser(provider, claims.subject);
      if (known) {
        await this.recordForExisting(known.id, agreement);
        return known;
      }
      if (claims.emailVerified && claims.email) {
        const owner = await this.users.findByEmail(claims.email);
        if (owner) {
          try {
            await this.identities.link(provider, claims.subject, owner.id);
          } catch (error) {
            if (error instanceof IdentityAlreadyLinkedError) continue;
            throw error;
          }
          await this.users.fillBlankNames(owner.id, names.firstName, names.lastName);
          await this.recordForExisting(owner.id, agreement);
          return owner;
        }
      }
      try {
        return await this.createUser(provider, claims, names, agreement);
      } catch (error) {
        if (error instanceof IdentityAlreadyLinkedError || error instanceof DuplicateUserError)
          continue;
        throw error;
      }
    }
    throw new Error(`social sign-in for ${provider} kept racing after ${MAX_ATTEMPTS} attempts`);
  }

  private async createUser(
    provider: SocialProvider,
    claims: IdentityClaims,
    names: Names,
    agreementInput: AgreementInput,
  ): Promise<User> {
    const agreement = decideAgreement(this.auth.agreementPolicy(), agreementInput, true);
    if (!agreement.ok) throw new RefusedError(agreement.message, agreement.details);
    const email = claims.emailVerified && claims.email ? claims.email : '';
    const username = await this.freeUsername(
      usernameBase({ firstName: names.firstName, lastName: names.lastName, email, provider }),
    );
    return this.identities.createUserWithIdentity(
      { username, email, passwordHash: null, firstName: names.firstName, lastName: names.lastName },
      provider,
      claims.subject,
      async (tx, userId) => {
        if (agreement.accept) {
          await this.agreements.record(userId, agreement.accept, 'api', this.clock.date(), tx);
        }
      },
    );
  }

  /** `base`, else the first free of `base2` … `base20`, else `base` with a random number. */
  private async freeUsername(base: string): Promise<string> {
    const candidates = usernameCandidates(base, USERNAME_CANDIDATES);
    const taken = await this.users.takenUsernames(candidates);
    return (
      candidates.find((candidate) => !taken.has(candidate.toLowerCase())) ??
      withSuffix(base, randomInt(100_000, 10_000_000))
    );
  }
}
