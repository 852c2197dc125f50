import type { Blocker } from './types.js';

/** The wording of a refusal that names no more specific reason. */
export const REFUSED_MESSAGE = 'The action is not allowed for this library now.';

/**
 * A workflow action is refused now; `blockers` says why. The one error filter answers it as 409
 * `{message, details: {blockers}}` (the API's refusal contract); services catch it where a refusal of one library
 * must not stop a batch. A plain Error: the domain knows nothing of HTTP.
 */
export class ContributionRefused extends Error {
  override readonly name = 'ContributionRefused';

  constructor(
    readonly blockers: Blocker[],
    message = REFUSED_MESSAGE,
  ) {
    super(message);
  }
}

/** Another library's write is in flight: one write at a time across every instance. */
export const IN_FLIGHT: Blocker = {
  code: 'writes_disabled',
  message: 'Another map write is in flight; try again when it ends.',
};
