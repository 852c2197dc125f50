/**
 * Shared set-up of the confirm suites (write order, the write lock, concurrency): a MapSuite, eligible libraries and
 * confirms started without waiting for them.
 */
import type { FormFields } from '../support/libraries.js';
import { adminPost, eligibleLibrary, mapSuite, type SubmittedLibrary } from './helpers.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function confirmSuite() {
  const suite = mapSuite();

  /** An eligible library: submitted, approved, checked; allow_write_api confirmed; the fake's log emptied. */
  const eligible = (fields: FormFields = {}) => eligibleLibrary(suite, fields);

  /** Starts a confirm without waiting for it (supertest sends on `then`). */
  const startConfirm = (lib: SubmittedLibrary, body: object = {}) =>
    adminPost(suite.t.http, suite.staff.access, `/${lib.slug}/confirm`, body).then((res) => res);

  return { ...suite, eligible, startConfirm };
}
