import { usernameBase, usernameCandidates, usernameSlug, withSuffix } from './username.js';

describe('social usernames', () => {
  it('slugs names: accents folded, words joined by dots, punctuation dropped', () => {
    expect(usernameSlug('José María García')).toBe('jose.maria.garcia');
    expect(usernameSlug("  O'Brien  ")).toBe('obrien');
    expect(usernameSlug('王 小明')).toBe('王.小明');
    expect(usernameSlug('...')).toBe('');
  });

  it('prefers the names, then the email local part, then the provider', () => {
    expect(
      usernameBase({ firstName: 'Jane', lastName: 'Doe', email: 'x@y.z', provider: 'apple' }),
    ).toBe('jane.doe');
    expect(usernameBase({ firstName: 'Jane', provider: 'apple' })).toBe('jane');
    expect(usernameBase({ email: 'jane.doe+books@example.com', provider: 'google' })).toBe(
      'jane.doe',
    );
    expect(usernameBase({ firstName: 'J', email: 'ab@example.com', provider: 'google' })).toBe(
      'googleuser',
    );
    expect(usernameBase({ provider: 'apple' })).toBe('appleuser');
  });

  it('keeps room for a suffix within 150 characters', () => {
    const base = usernameBase({ firstName: 'a'.repeat(300), provider: 'apple' });
    expect(base.length).toBe(142);
    expect(withSuffix('a'.repeat(150), 12345)).toHaveLength(150);
    expect(withSuffix('a'.repeat(150), 12345).endsWith('12345')).toBe(true);
  });

  it('numbers candidates from 2', () => {
    expect(usernameCandidates('jane', 3)).toEqual(['jane', 'jane2', 'jane3']);
    expect(usernameCandidates('jane', 2, 5)).toEqual(['jane5', 'jane6']);
  });
});
