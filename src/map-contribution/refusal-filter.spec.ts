/**
 * The one error filter answers the domain's ContributionRefused as the API's refusal contract: 409
 * `{message, details: {blockers}}`, the same body the workflow answered before it had a domain error.
 */
import type { ArgumentsHost } from '@nestjs/common';
import { AllExceptionsFilter } from '../common/errors/all-exceptions.filter.js';
import { ContributionRefused } from './domain/refusal.js';

function answer(exception: unknown): { status: number; body: unknown } {
  const sent: { status: number; body: unknown } = { status: 0, body: undefined };
  const response = {
    headersSent: false,
    setHeader: () => undefined,
    hasHeader: () => false,
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const host = {
    switchToHttp: () => ({
      getResponse: () => response,
      getRequest: () => ({ method: 'POST', path: '/api/v1/admin/map-contributions/x/confirm' }),
    }),
  } as unknown as ArgumentsHost;
  const filter = new AllExceptionsFilter();
  // The 500 path logs the error with its stack: kept out of the test output.
  (filter as unknown as { logger: { error: () => void } }).logger = { error: () => undefined };
  filter.catch(exception, host);
  return sent;
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
