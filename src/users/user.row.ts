/**
 * An account as `UsersRepository` returns it (the `users` table; `USER_COLUMNS` reads it). `email` is '' for a social
 * account whose provider did not verify one (the unique index skips '').
 */
export interface User {
  id: number;
  username: string;
  email: string;
  /** argon2id PHC string; null for social-only accounts. */
  passwordHash: string | null;
  isStaff: boolean;
  isActive: boolean;
  firstName: string;
  lastName: string;
  /** Notices by email (decisions on the user's submissions); security notices are always sent. */
  notifyEmail: boolean;
  notifyPush: boolean;
  lastLoginAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The select list that reads a row of `users` (aliased `u`) as a `User`. */
export const USER_COLUMNS = `u.id, u.username, u.email, u.password_hash AS "passwordHash", u.is_staff AS "isStaff",
  u.is_active AS "isActive", u.first_name AS "firstName", u.last_name AS "lastName",
  u.notify_email AS "notifyEmail", u.notify_push AS "notifyPush", u.last_login_at AS "lastLoginAt",
  u.created_at AS "createdAt", u.updated_at AS "updatedAt"`;
