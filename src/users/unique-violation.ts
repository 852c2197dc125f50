import { uniqueViolationOf } from '../common/errors/unique-violation.js';

export type UniqueUserField = 'username' | 'email';

/** Another account already holds this username or email (caught from the unique indexes, so races are safe). */
export class DuplicateUserError extends Error {
  constructor(readonly field: UniqueUserField) {
    super(`duplicate ${field}`);
    this.name = 'DuplicateUserError';
  }
}

const USER_UNIQUE_INDEXES: Record<string, UniqueUserField> = {
  users_username_lower_key: 'username',
  users_email_lower_key: 'email',
};

/** Re-throws a unique violation on the users table as DuplicateUserError; other errors unchanged. */
export function asDuplicateUserError(error: unknown): unknown {
  const constraint = uniqueViolationOf(error);
  const field = constraint === null ? undefined : USER_UNIQUE_INDEXES[constraint];
  return field ? new DuplicateUserError(field) : error;
}
