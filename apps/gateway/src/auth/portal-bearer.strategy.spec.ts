import { PortalLinkRepository, PresentedPortalLink } from '@app/persistence';
import { PortalBearerStrategy } from './bearer.strategies';

describe('PortalBearerStrategy', () => {
  const wellFormed = `psp_${'A'.repeat(43)}`;
  const strategy = (link: PresentedPortalLink | null = null) => {
    const lookups: string[] = [];
    const links = {
      findByToken: async (token: string) => {
        lookups.push(token);
        return link;
      },
    } as unknown as PortalLinkRepository;
    return { strategy: new PortalBearerStrategy(links), lookups };
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
    await expect(s.validate(token)).resolves.toBe(false);
    expect(lookups).toEqual([]);
  });

  it('looks a token of the issued shape up, once, and refuses it when no link has it', async () => {
    const { strategy: s, lookups } = strategy();
    await expect(s.validate(wellFormed)).resolves.toBe(false);
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
    await expect(s.validate(wellFormed)).resolves.toMatchObject({ kind: 'portal', portal: { subscriptionId: 's1' } });
  });
});
