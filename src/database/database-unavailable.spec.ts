import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-unavailable.js';

const driverError = (fields: Record<string, string>) =>
  Object.assign(new Error(fields.message ?? 'x'), fields);
const failed = (fields: Record<string, string>) =>
  new QueryFailedError('SELECT 1', [], driverError(fields));

describe('isDatabaseUnavailable', () => {
  it.each([
    ['statement_timeout', failed({ code: '57014' })],
    ['pg_terminate_backend', failed({ code: '57P01' })],
    ['starting up', driverError({ code: '57P03' })],
    ['idle in transaction timeout', failed({ code: '25P03' })],
    ['connection refused', driverError({ code: 'ECONNREFUSED' })],
    ['pool wait', new Error('timeout exceeded when trying to connect')],
    ['lost connection', new Error('Connection terminated unexpectedly')],
    [
      'released runner',
      Object.assign(new Error('released'), { name: 'QueryRunnerAlreadyReleasedError' }),
    ],
  ])('%s → unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['unique violation', failed({ code: '23505' })],
    ['syntax error', failed({ code: '42601' })],
    ['a bug', new TypeError('undefined is not a function')],
    // An outbound HTTP failure names its cause; it is not the database's.
    [
      'fetch failed',
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }),
    ],
    ['nothing', undefined],
  ])('%s → not unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
