import { QueryFailedError } from 'typeorm';
import { uniqueViolationOf } from './unique-violation.js';

const driverError = (fields: Record<string, string>) =>
  Object.assign(new Error('duplicate key value violates unique constraint'), fields);

describe('uniqueViolationOf', () => {
  it.each([
    [
      'wrapped by TypeORM',
      new QueryFailedError('INSERT', [], driverError({ code: '23505', constraint: 'users_pkey' })),
      'users_pkey',
    ],
    [
      'as node-postgres raised it',
      driverError({ code: '23505', constraint: 'users_pkey' }),
      'users_pkey',
    ],
    ['without a constraint name', driverError({ code: '23505' }), ''],
  ])('names the constraint of a unique violation %s', (_, error, expected) => {
    expect(uniqueViolationOf(error)).toBe(expected);
  });

  it.each([
    ['another SQLSTATE', new QueryFailedError('INSERT', [], driverError({ code: '23503' }))],
    ['an error without a code', new Error('boom')],
    ['not an object', '23505'],
    ['null', null],
  ])('is null for %s', (_, error) => {
    expect(uniqueViolationOf(error)).toBeNull();
  });
});
