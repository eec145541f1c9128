import { checkSubscriberUrl } from './subscriber-url';

describe(checkSubscriberUrl.name, () => {
  const resolveTo = (addresses: string[]) => async () => addresses;

  it('refuses a hostname that resolves to any private address', async () => {
    const check = await checkSubscriberUrl('https://hooks.example.com/x', false, resolveTo(['8.8.8.8', '10.0.0.5']));
    expect(check).toEqual({ ok: false, reason: expect.stringContaining('10.0.0.5') });
  });

  it('refuses a hostname that resolves to a NAT64 form of the metadata service', async () => {
    const check = await checkSubscriberUrl('https://hooks.example.com/x', false, resolveTo(['64:ff9b::a9fe:a9fe']));
    expect(check).toEqual({ ok: false, reason: expect.stringContaining('169.254.169.254') });
  });

  it('allows a public one, and anything when private networks are allowed', async () => {
    expect(await checkSubscriberUrl('https://hooks.example.com/x', false, resolveTo(['8.8.8.8']))).toEqual({
      ok: true,
    });
    expect(await checkSubscriberUrl('http://127.0.0.1:9/x', true)).toEqual({ ok: true });
  });

  it.each(['ftp://example.com/', 'not a url', 'http://user:pw@example.com/'])(
    'refuses %p whatever the setting',
    async (url) => {
      expect((await checkSubscriberUrl(url, true)).ok).toBe(false);
    },
  );

  it.each([
    'http://[::1]:8080/',
    'http://169.254.169.254/latest/meta-data',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[::ffff:7f00:1]/',
    'http://[::127.0.0.1]/',
    'http://0x7f.1/',
    'http://2130706433/',
  ])('refuses the literal %s without resolving', async (url) => {
    const resolve = jest.fn();
    expect((await checkSubscriberUrl(url, false, resolve)).ok).toBe(false);
    expect(resolve).not.toHaveBeenCalled();
  });
});
