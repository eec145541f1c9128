import { blockedReason, isPublicAddress } from './address-policy';

describe('address policy (SSRF)', () => {
  // Each row is one of the forms the black-box attack used, or a registry entry beside it.
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata (link-local)'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'this network'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd12::1', 'unique local'],
    ['fd00:ec2::254', 'AWS IPv6 metadata'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata, hex form'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata service'],
    ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
    ['2002:a9fe:a9fe::1', '6to4'],
    ['2002:808:808::1', '6to4 even of a public address'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::8.8.8.8', 'IPv4-compatible, public inside'],
    ['::ffff:0:7f00:1', 'RFC 6145 translated'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation (RFC 9637)'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'site-local'],
  ])('refuses %s (%s)', (address) => {
    expect(blockedReason(address)).toEqual(expect.any(String));
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '64:ff9b::8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('refuses anything that is not an address', () => {
    expect(blockedReason('example.com')).toBe('not an IP address');
    expect(isPublicAddress('')).toBe(false);
  });

  it('says which embedded address was refused', () => {
    expect(blockedReason('64:ff9b::a9fe:a9fe')).toMatch(/169\.254\.169\.254/);
  });
});
