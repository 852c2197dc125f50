import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { NotificationsWorker } from '../../src/notifications/notifications.worker.js';
import type { TestApp } from './app.js';
import { queryRows } from './database.js';

/** What supertest's request() takes: the app's HTTP server. */
export type HttpTarget = Parameters<typeof request>[0];

export interface RegisteredUser {
  id: number;
  username: string;
  email: string;
  password: string;
  access: string;
  refresh: string;
}

export interface NewUserFields {
  username?: string;
  email?: string;
  password?: string;
}

/** A password the policy accepts for any generated username/email. */
export const TEST_PASSWORD = 'Quiet-Lantern-7319';

/** `Authorization` header value for an access token. */
export function bearer(token: string): string {
  return `Bearer ${token}`;
}

/**
 * Registers an account through the API (POST /auth/register) and reads its id. The register tier allows 5 per
 * window: suites that register more should create their app with `RATE_LIMIT_ENABLED: 'false'` (or a higher
 * `RATE_LIMIT_REGISTER`).
 */
export async function registerUser(
  http: HttpTarget,
  overrides: NewUserFields = {},
): Promise<RegisteredUser> {
  const username = overrides.username ?? `reader_${randomBytes(5).toString('hex')}`;
  const email = overrides.email ?? `${username.toLowerCase()}@example.org`;
  const password = overrides.password ?? TEST_PASSWORD;
  const res = await request(http).post('/api/v1/auth/register').send({ username, email, password });
  if (res.status !== 201) {
    throw new Error(
      `registerUser: POST /auth/register answered ${res.status} ${JSON.stringify(res.body)}`,
    );
  }
  const { access, refresh } = res.body as { access: string; refresh: string };
  const me = await request(http).get('/api/v1/auth/me').set('Authorization', bearer(access));
  if (me.status !== 200) throw new Error(`registerUser: GET /auth/me answered ${me.status}`);
  return { id: me.body.id, username, email: email.trim().toLowerCase(), password, access, refresh };
}

/** Logs in through the API; answers the token pair. */
export async function loginUser(
  http: HttpTarget,
  username: string,
  password: string,
): Promise<{ access: string; refresh: string }> {
  const res = await request(http).post('/api/v1/auth/login').send({ username, password });
  if (res.status !== 200)
    throw new Error(
      `loginUser: POST /auth/login answered ${res.status} ${JSON.stringify(res.body)}`,
    );
  return res.body as { access: string; refresh: string };
}

/** Makes the user staff (directly in the database; takes effect on the next request). */
export async function makeStaff(databaseUrl: string, userId: number): Promise<void> {
  await queryRows(databaseUrl, 'UPDATE users SET is_staff = true WHERE id = $1', [userId]);
}

/** Deactivates the account (directly in the database, as staff would): it can no longer sign in or use its tokens. */
export async function deactivateUser(databaseUrl: string, userId: number): Promise<void> {
  await queryRows(databaseUrl, 'UPDATE users SET is_active = false WHERE id = $1', [userId]);
}

/** Asks for a password reset of `email` through the API (200) and sends the queued mail (one run of the worker). */
export async function sendResetMail(
  t: Pick<TestApp, 'http' | 'app'>,
  email: string,
): Promise<void> {
  await request(t.http).post('/api/v1/auth/password/reset').send({ email }).expect(200);
  await t.app.get(NotificationsWorker).runOnce();
}
