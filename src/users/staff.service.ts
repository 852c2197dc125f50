import { Injectable } from '@nestjs/common';
import { PasswordHasher } from './password-hasher.js';
import { UsersRepository } from './users.repository.js';

export interface CreateStaffInput {
  username: string;
  email: string;
  password: string;
}

export type CreateStaffOutcome = 'created' | 'promoted';

/** `create-staff`: creates a staff account, or promotes (and re-keys) the existing account with that username. */
@Injectable()
export class StaffService {
  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
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
    if (existing) {
      existing.isStaff = true;
      existing.isActive = true;
      existing.email = email;
      existing.passwordHash = passwordHash;
      await this.users.save(existing);
      return { outcome: 'promoted', id: existing.id };
    }
    const created = await this.users.save(
      this.users.create({ username, email, passwordHash, isStaff: true }),
    );
    return { outcome: 'created', id: created.id };
  }
}
