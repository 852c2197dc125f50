import { ApiError } from './api-error.js';
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidFieldsError,
  NotFoundError,
  RefusedError,
  UnauthorizedError,
  UnavailableError,
} from './domain-errors.js';
import { filterAnswer } from './filter-fixtures.js';

const answer = (error: unknown) => filterAnswer(error);

describe('AllExceptionsFilter and domain errors', () => {
  it.each([
    [new NotFoundError(), 404, { message: 'Not found.', details: null }],
    [
      new RefusedError('No staged changes to review.'),
      400,
      { message: 'No staged changes to review.', details: null },
    ],
    [
      new RefusedError('Agree first.', { version: '2' }),
      400,
      { message: 'Agree first.', details: { version: '2' } },
    ],
    [
      new ConflictError('Held elsewhere.', { id: 1 }),
      409,
      { message: 'Held elsewhere.', details: { id: 1 } },
    ],
    [new UnauthorizedError(), 401, { message: 'Unauthorized', details: null }],
    [
      new UnauthorizedError('Invalid credentials.'),
      401,
      { message: 'Invalid credentials.', details: null },
    ],
    [new ForbiddenError('Staff only.'), 403, { message: 'Staff only.', details: null }],
    [
      InvalidFieldsError.single(['file', 'photo'], 'A photo is required.', 'missing'),
      422,
      {
        message: 'Validation error.',
        details: {
          errors: [{ loc: ['file', 'photo'], msg: 'A photo is required.', type: 'missing' }],
        },
      },
    ],
  ])('%p answers %i with the error’s own message and details', (error, status, body) => {
    const sent = answer(error);
    expect(sent.status).toBe(status);
    expect(sent.body).toEqual(body);
    expect(sent.headers['Cache-Control']).toBe('private, no-store');
  });

  it('gives the same answer as the ApiError it replaces', () => {
    const pairs: [DomainError, ApiError][] = [
      [new NotFoundError(), ApiError.notFound()],
      [new RefusedError('x', { a: 1 }), ApiError.badRequest('x', { a: 1 })],
      [new ConflictError('x'), ApiError.conflict('x')],
      [new UnauthorizedError(), ApiError.unauthorized()],
      [new ForbiddenError('x'), ApiError.forbidden('x')],
      [new UnavailableError('x', 2.2), ApiError.unavailable('x', 2.2)],
    ];
    for (const [domain, http] of pairs) expect(answer(domain)).toEqual(answer(http));
  });

  it('answers 503 with Retry-After in whole seconds of at least 1', () => {
    const sent = answer(new UnavailableError('Export is busy.', 0.2));
    expect(sent.status).toBe(503);
    expect(sent.body).toEqual({ message: 'Export is busy.', details: { retry_after: 1 } });
    expect(sent.headers['Retry-After']).toBe('1');
    expect(answer(new UnavailableError('Busy.', 41.5)).headers['Retry-After']).toBe('42');
  });

  it('treats a domain error of an unmapped kind as unexpected (500, message not leaked)', () => {
    class Unmapped extends DomainError {}
    const sent = answer(new Unmapped('secret internals'));
    expect(sent.status).toBe(500);
    expect(sent.body).toEqual({ message: 'Internal server error.', details: null });
  });
});
