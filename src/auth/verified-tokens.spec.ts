import { VerifiedTokens } from './verified-tokens.js';

describe('VerifiedTokens', () => {
  it('answers the claims of a remembered token string only, and counts its hits', () => {
    const memo = new VerifiedTokens(10);
    const claims = { sub: '1' };
    memo.remember('a.b.c', claims);
    expect(memo.get('a.b.c')).toBe(claims);
    expect(memo.get('a.b.d')).toBeUndefined();
    expect(memo.hits).toBe(1);
  });

  it('is bounded: the oldest entry goes first', () => {
    const memo = new VerifiedTokens(2);
    memo.remember('one', {});
    memo.remember('two', {});
    memo.remember('three', {});
    expect(memo.size).toBe(2);
    expect(memo.get('one')).toBeUndefined();
    expect(memo.get('two')).toBeDefined();
    expect(memo.get('three')).toBeDefined();
  });

  it('forgets a token', () => {
    const memo = new VerifiedTokens(2);
    memo.remember('one', {});
    memo.forget('one');
    expect(memo.get('one')).toBeUndefined();
    expect(memo.size).toBe(0);
  });
});
