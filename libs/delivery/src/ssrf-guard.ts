import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Addresses a subscriber URL must not reach: loopback, private, link-local (which holds the cloud metadata
// endpoint 169.254.169.254), carrier-grade NAT, "this network", multicast/reserved and their IPv6 twins.
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['fd00:ec2::', 32]] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address); // IPv4-mapped IPv6
  return mapped ? blocked.check(mapped[1], 'ipv4') : blocked.check(address, 'ipv6');
}

export type UrlCheck = { ok: true } | { ok: false; reason: string };

export type Resolver = (host: string) => Promise<string[]>;
const dnsResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The SSRF guard: a subscriber URL must be http(s) and every address its host resolves to must be public.
 * Checked when a subscription is saved and again before each send, because DNS can change in between.
 */
export async function checkSubscriberUrl(raw: string, allowPrivate: boolean, resolve: Resolver = dnsResolver): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'only http and https URLs are allowed' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed; use a token' };
  if (allowPrivate) return { ok: true };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch (err) {
    return { ok: false, reason: `host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const bad = addresses.find(isPrivateAddress);
  return bad
    ? { ok: false, reason: `host ${host} resolves to ${bad}, a loopback, private, link-local or metadata address` }
    : { ok: true };
}
