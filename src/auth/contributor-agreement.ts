/** The contributor agreement in force (CONTRIBUTOR_AGREEMENT_VERSION / _REQUIRED). */
export interface AgreementPolicy {
  current: string | null;
  required: boolean;
}

/** The two optional fields of POST /auth/register and POST /auth/social. */
export interface AgreementInput {
  contributor_agreement_version?: string;
  contributor_agreement_accepted?: boolean;
}

export type AgreementOutcome =
  | { ok: true; accept: string | null }
  | { ok: false; message: string; details: Record<string, unknown> | null };

export const AGREEMENT_MESSAGES = {
  together: 'Send contributor_agreement_version and contributor_agreement_accepted together.',
  required: (current: string) =>
    `You must accept the contributor agreement (version ${current}) to create an account.`,
  notCurrent: (sent: string, current: string) =>
    `Contributor agreement version '${sent}' is not the current one ('${current}'). Accept the current version to create an account.`,
} as const;

/** Whether the request sent only one of the two fields (a malformed request, 400 for every account). */
export function agreementFieldsMismatched(input: AgreementInput): boolean {
  return (
    (input.contributor_agreement_version === undefined) !==
    (input.contributor_agreement_accepted === undefined)
  );
}

/**
 * What a sign-up or sign-in does with the agreement fields. Only `accepted: true` for the version in force is an
 * acceptance (`accept` names the version to store). Anything else stores nothing and:
 * - for an existing account (a social sign-in again, or a link by email) never blocks the sign-in;
 * - for a new account is refused only when the agreement is required: no acceptance, `accepted: false`, or a
 *   version that is not the current one (the client shows an outdated text) all give a 400 naming the current one;
 * - with no agreement in force (no CONTRIBUTOR_AGREEMENT_VERSION) the fields are accepted and ignored.
 * Sending one field without the other is a 400 in every case (see agreementFieldsMismatched).
 */
export function decideAgreement(
  policy: AgreementPolicy,
  input: AgreementInput,
  newAccount: boolean,
): AgreementOutcome {
  if (agreementFieldsMismatched(input)) {
    return { ok: false, message: AGREEMENT_MESSAGES.together, details: null };
  }
  const sent = input.contributor_agreement_version;
  const accepted = input.contributor_agreement_accepted === true;
  if (policy.current !== null && accepted && sent === policy.current) {
    return { ok: true, accept: policy.current };
  }
  if (!newAccount || policy.current === null || !policy.required) return { ok: true, accept: null };
  const details = { contributor_agreement_version: policy.current };
  if (accepted && sent !== undefined) {
    return { ok: false, message: AGREEMENT_MESSAGES.notCurrent(sent, policy.current), details };
  }
  return { ok: false, message: AGREEMENT_MESSAGES.required(policy.current), details };
}
