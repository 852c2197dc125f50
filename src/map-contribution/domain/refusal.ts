import { ConflictError } from '../../common/errors/domain-errors.js';
import type { Blocker } from './types.js';

/** The wording of a refusal that names no more specific reason. */
export const REFUSED_MESSAGE = 'The action is not allowed for this library now.';

/**
 * A workflow action is refused now; `blockers` says why. A domain conflict (`common/errors/domain-errors.ts`, which
 * imports nothing), so the one error filter answers it as 409 `{message, details: {blockers}}` (the API's refusal
 * contract); services catch it where a refusal of one library must not stop a batch. The domain knows no HTTP.
 */
export class ContributionRefused extends ConflictError {
  constructor(
    readonly blockers: Blocker[],
    message = REFUSED_MESSAGE,
  ) {
    super(message, { blockers });
  }
}

/** Another library's write is in flight: one write at a time across every instance. */
export const IN_FLIGHT: Blocker = {
  code: 'writes_disabled',
  message: 'Another map write is in flight; try again when it ends.',
};
