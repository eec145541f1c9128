import { TokenSet } from './token-set';

describe(TokenSet.name, () => {
  const sut = new TokenSet(['old-token-0123456789', 'new-token-0123456789']);

  it('accepts every configured token, so one can be rotated while the other still works', () => {
    expect(sut.match('old-token-0123456789')).toBe(0);
    expect(sut.match('new-token-0123456789')).toBe(1);
  });

  it.each(['', 'old-token', 'old-token-01234567890', 'OLD-TOKEN-0123456789'])('refuses %p', (candidate) => {
    expect(sut.match(candidate)).toBe(-1);
  });

  it('accepts nothing when no token is configured', () => {
    expect(new TokenSet([]).match('anything-at-all-here')).toBe(-1);
  });
});
