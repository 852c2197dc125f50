import {
  AGREEMENT_MESSAGES,
  decideAgreement,
  type AgreementInput,
  type AgreementOutcome,
  type AgreementPolicy,
} from './contributor-agreement.js';

const OPTIONAL: AgreementPolicy = { current: '2026-06', required: false };
const REQUIRED: AgreementPolicy = { current: '2026-06', required: true };
const NONE: AgreementPolicy = { current: null, required: false };

const accept = (version: string): AgreementInput => ({
  contributor_agreement_version: version,
  contributor_agreement_accepted: true,
});
const decline = (version: string): AgreementInput => ({
  contributor_agreement_version: version,
  contributor_agreement_accepted: false,
});
const stored = (version: string | null): AgreementOutcome => ({ ok: true, accept: version });
const refused = (message: string, current: string | null = '2026-06'): AgreementOutcome => ({
  ok: false,
  message,
  details: current ? { contributor_agreement_version: current } : null,
});
const together = refused(AGREEMENT_MESSAGES.together, null);

describe('decideAgreement', () => {
  const cases: [string, AgreementPolicy, AgreementInput, boolean, AgreementOutcome][] = [
    ['neither field, optional, new account', OPTIONAL, {}, true, stored(null)],
    [
      'neither field, required, new account',
      REQUIRED,
      {},
      true,
      refused(AGREEMENT_MESSAGES.required('2026-06')),
    ],
    ['neither field, required, existing account', REQUIRED, {}, false, stored(null)],
    ['current version accepted, optional', OPTIONAL, accept('2026-06'), true, stored('2026-06')],
    ['current version accepted, required', REQUIRED, accept('2026-06'), true, stored('2026-06')],
    [
      'current version accepted by an existing account',
      REQUIRED,
      accept('2026-06'),
      false,
      stored('2026-06'),
    ],
    ['declined, optional', OPTIONAL, decline('2026-06'), true, stored(null)],
    [
      'declined, required',
      REQUIRED,
      decline('2026-06'),
      true,
      refused(AGREEMENT_MESSAGES.required('2026-06')),
    ],
    [
      'declined by an existing account, required',
      REQUIRED,
      decline('2026-06'),
      false,
      stored(null),
    ],
    ['an old version, optional', OPTIONAL, accept('2025-01'), true, stored(null)],
    [
      'an old version, required',
      REQUIRED,
      accept('2025-01'),
      true,
      refused(AGREEMENT_MESSAGES.notCurrent('2025-01', '2026-06')),
    ],
    [
      'an old version from an existing account, required',
      REQUIRED,
      accept('2025-01'),
      false,
      stored(null),
    ],
    ['no agreement in force', NONE, accept('2026-06'), true, stored(null)],
    ['only the version', REQUIRED, { contributor_agreement_version: '2026-06' }, true, together],
    ['only the flag', OPTIONAL, { contributor_agreement_accepted: true }, true, together],
    [
      'only the flag, existing account',
      OPTIONAL,
      { contributor_agreement_accepted: true },
      false,
      together,
    ],
  ];

  it.each(cases)('%s', (_label, policy, input, newAccount, expected) => {
    expect(decideAgreement(policy, input, newAccount)).toEqual(expected);
  });
});
