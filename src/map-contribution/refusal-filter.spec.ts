/**
 * The one error filter answers the domain's ContributionRefused as the API's refusal contract: 409
 * `{message, details: {blockers}}`, the same body the workflow answered before it had a domain error.
 */
import { filterAnswer } from '../common/errors/filter-fixtures.js';
import { ContributionRefused } from './domain/refusal.js';

function answer(exception: unknown): { status?: number; body?: unknown } {
  const { status, body } = filterAnswer(exception, {
    method: 'POST',
    path: '/api/v1/admin/map-contributions/x/confirm',
  });
  return { status, body };
}

describe('ContributionRefused through the error filter', () => {
  it('is 409 with the message and details.blockers', () => {
    const blockers = [
      { code: 'check_stale' as const, message: 'The duplicate check is too old.' },
      { code: 'writes_disabled' as const, message: 'Writes are disabled.' },
    ];
    expect(answer(new ContributionRefused(blockers))).toEqual({
      status: 409,
      body: {
        message: 'The action is not allowed for this library now.',
        details: { blockers },
      },
    });
    expect(answer(new ContributionRefused(blockers, 'Cannot be previewed.')).body).toEqual({
      message: 'Cannot be previewed.',
      details: { blockers },
    });
  });

  it('an error that only borrows the name is not a refusal', () => {
    const impostor = new Error('boom');
    impostor.name = 'ContributionRefused';
    expect(answer(impostor).status).toBe(500);
  });
});
