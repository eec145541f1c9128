import { PortalLinkRepository, PresentedPortalLink } from '@app/persistence';
import { PortalBearerStrategy } from './bearer.strategies';
import { UNKNOWN_PORTAL_TOKENS, UnknownPortalTokens } from './unknown-portal-tokens';

describe('PortalBearerStrategy', () => {
  const wellFormed = `psp_${'A'.repeat(43)}`;
  const from = (address = '192.0.2.1') => ({ headers: {}, address });
  const strategy = (link: PresentedPortalLink | null = null) => {
    const lookups: string[] = [];
    const links = {
      findByToken: async (token: string) => {
        lookups.push(token);
        return link;
      },
    } as unknown as PortalLinkRepository;
    return { strategy: new PortalBearerStrategy(links, new UnknownPortalTokens()), lookups };
  };

  it.each([
    ['the prefix alone', 'psp_'],
    ['too short', 'psp_x'],
    ['one character short', `psp_${'A'.repeat(42)}`],
    ['one character long', `psp_${'A'.repeat(44)}`],
    ['not base64url', `psp_${'A'.repeat(42)}+`],
    ['another prefix', `xsp_${'A'.repeat(43)}`],
    ['a line break after it', `${wellFormed}\n`],
  ])('refuses a token never issued (%s) without a database query', async (_, token) => {
    const { strategy: s, lookups } = strategy();
    await expect(s.validate(from(), token)).resolves.toBe(false);
    expect(lookups).toEqual([]);
  });

  it('looks a token of the issued shape up, once, and refuses it when no link has it', async () => {
    const { strategy: s, lookups } = strategy();
    await expect(s.validate(from(), wellFormed)).resolves.toBe(false);
    expect(lookups).toEqual([wellFormed]);
  });

  it('accepts a live link', async () => {
    const now = new Date();
    const { strategy: s } = strategy({
      id: '7',
      subscription_id: 's1',
      expires_at: new Date(now.getTime() + 60_000),
      checked_at: now,
      revoked_at: null,
      subscription_deleted: false,
      subscription_operational: false,
    } as unknown as PresentedPortalLink);
    await expect(s.validate(from(), wellFormed)).resolves.toMatchObject({
      kind: 'portal',
      portal: { subscriptionId: 's1' },
    });
  });

  it('refuses, with no lookup, the tokens of an address whose tokens keep opening nothing; not another address', async () => {
    const { strategy: s, lookups } = strategy();
    for (let i = 0; i < UNKNOWN_PORTAL_TOKENS.burst; i++)
      await expect(s.validate(from(), wellFormed)).resolves.toBe(false);
    expect(lookups).toHaveLength(UNKNOWN_PORTAL_TOKENS.burst);
    const refused = await s.validate(from(), wellFormed).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 401 });
    expect((refused as { getResponse(): unknown }).getResponse()).toMatchObject({ reason: 'unknown-portal-tokens' });
    expect(lookups).toHaveLength(UNKNOWN_PORTAL_TOKENS.burst); // refused before the lookup
    await expect(s.validate(from('192.0.2.2'), wellFormed)).resolves.toBe(false); // another sender is not refused
    expect(lookups).toHaveLength(UNKNOWN_PORTAL_TOKENS.burst + 1);
  });

  it('looks up a token that opened a link before, whatever its address has guessed (a proxy shared with a guesser)', async () => {
    const now = new Date();
    const live = { id: '7', subscription_id: 's1', expires_at: new Date(now.getTime() + 60_000), checked_at: now };
    let link: PresentedPortalLink | null = live as unknown as PresentedPortalLink;
    const lookups: string[] = [];
    const links = { findByToken: async (t: string) => (lookups.push(t), link) } as unknown as PortalLinkRepository;
    const s = new PortalBearerStrategy(links, new UnknownPortalTokens());
    const proxy = from('10.0.0.1');
    await expect(s.validate(proxy, wellFormed)).resolves.toMatchObject({ kind: 'portal' });
    link = null; // the guesser's tokens, through the same proxy
    const guess = `psp_${'B'.repeat(43)}`;
    for (let i = 0; i < UNKNOWN_PORTAL_TOKENS.burst; i++) await s.validate(proxy, guess);
    await expect(s.validate(proxy, guess)).rejects.toMatchObject({ status: 401 });
    link = live as unknown as PresentedPortalLink;
    await expect(s.validate(proxy, wellFormed)).resolves.toMatchObject({ kind: 'portal' });
    expect(lookups.filter((t) => t === wellFormed)).toHaveLength(2); // looked up each time: a revocation shows
  });
});
