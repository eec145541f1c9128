import { checkSubscriberUrl, isPrivateAddress } from './ssrf-guard';

describe('SSRF guard', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd12::1', '::ffff:127.0.0.1', 'fd00:ec2::254'])(
    'refuses %s',
    (address) => expect(isPrivateAddress(address)).toBe(true),
  );

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700::1111'])('allows %s', (address) => expect(isPrivateAddress(address)).toBe(false));

  const resolveTo = (addresses: string[]) => async () => addresses;

  it('refuses a hostname that resolves to any private address', async () => {
    const check = await checkSubscriberUrl('https://hooks.example.com/x', false, resolveTo(['8.8.8.8', '10.0.0.5']));
    expect(check).toEqual({ ok: false, reason: expect.stringContaining('10.0.0.5') });
  });

  it('allows a public one, and anything when private networks are allowed', async () => {
    expect(await checkSubscriberUrl('https://hooks.example.com/x', false, resolveTo(['8.8.8.8']))).toEqual({ ok: true });
    expect(await checkSubscriberUrl('http://127.0.0.1:9/x', true)).toEqual({ ok: true });
  });

  it.each(['ftp://example.com/', 'not a url', 'http://user:pw@example.com/'])('refuses %p whatever the setting', async (url) => {
    expect((await checkSubscriberUrl(url, true)).ok).toBe(false);
  });

  it('refuses literal private IPs without resolving', async () => {
    expect((await checkSubscriberUrl('http://[::1]:8080/', false)).ok).toBe(false);
    expect((await checkSubscriberUrl('http://169.254.169.254/latest/meta-data', false)).ok).toBe(false);
  });
});
