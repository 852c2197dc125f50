import jwt from 'jsonwebtoken';
import { jwtKey } from './tokens.service.js';

describe('jwtKey', () => {
  const secret = 'a-secret-of-at-least-32-characters-ü';

  it('is the same HS256 key as the secret string: tokens signed either way verify either way', () => {
    const key = jwtKey(secret);
    const byString = jwt.sign({ sub: '1' }, secret, { algorithm: 'HS256' });
    const byKey = jwt.sign({ sub: '1' }, key, { algorithm: 'HS256' });
    expect(jwt.verify(byString, key, { algorithms: ['HS256'] })).toMatchObject({ sub: '1' });
    expect(jwt.verify(byKey, secret, { algorithms: ['HS256'] })).toMatchObject({ sub: '1' });
  });

  it('rejects a token signed with another secret', () => {
    const other = jwt.sign({ sub: '1' }, `${secret}x`, { algorithm: 'HS256' });
    expect(() => jwt.verify(other, jwtKey(secret), { algorithms: ['HS256'] })).toThrow(
      'invalid signature',
    );
  });
});
