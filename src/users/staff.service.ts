import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { ModerationAuditService } from '../moderation-audit/moderation-audit.service.js';
import { PasswordHasher } from './password-hasher.js';
import { UsersRepository } from './users.repository.js';

export interface CreateStaffInput {
  username: string;
  email: string;
  password: string;
}

export type CreateStaffOutcome = 'created' | 'promoted';

/**
 * `create-staff`: creates a staff account, or promotes (and re-keys) the existing account with that username. Either
 * is recorded in the moderation audit trail (actor: none, the command line) in the same transaction.
 */
@Injectable()
export class StaffService {
  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly audit: ModerationAuditService,
    private readonly db: Database,
  ) {}

  async createOrPromote(
    input: CreateStaffInput,
  ): Promise<{ outcome: CreateStaffOutcome; id: number }> {
    const username = input.username.trim();
    const email = input.email.trim().toLowerCase();
    if (username.length < 3 || username.length > 150)
      throw new Error('username must be 3-150 characters');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      throw new Error('email is not valid');
    if (input.password.length < 8 || input.password.length > 128)
      throw new Error('password must be 8-128 characters');

    const existing = await this.users.findByUsername(username);
    const emailOwner = await this.users.findByEmail(email);
    if (emailOwner && emailOwner.id !== existing?.id)
      throw new Error('that email belongs to another account');

    const passwordHash = await this.hasher.hash(input.password);
    return this.db.transaction(async (tx) => {
      const promoted = existing
        ? await this.users.promoteToStaff(existing.id, email, passwordHash, tx)
        : null;
      const user =
        promoted ?? (await this.users.insert({ username, email, passwordHash, isStaff: true }, tx));
      const outcome: CreateStaffOutcome = promoted ? 'promoted' : 'created';
      await this.audit.record(
        tx,
        outcome === 'created' ? 'staff_created' : 'staff_promoted',
        null,
        null,
        { user: { id: user.id, username: user.username }, via: 'cli' },
      );
      return { outcome, id: user.id };
    });
  }
}
