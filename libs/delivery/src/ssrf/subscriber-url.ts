import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { blockedReason } from './address-policy';

export type UrlCheck = { ok: true } | { ok: false; reason: string };

export type Resolver = (host: string) => Promise<string[]>;
const dnsResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The parts of a subscriber URL that do not depend on DNS: http(s), no credentials, no private IP literal. */
export function checkUrlShape(raw: string, allowPrivate: boolean): UrlCheck & { host?: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, reason: 'only http and https URLs are allowed' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed; use a token' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host)) {
    const reason = blockedReason(host);
    if (reason) return { ok: false, reason: `${host} is ${reason}` };
  }
  return { ok: true, host };
}

/**
 * Checked when a subscription is saved, so an operator hears at once that a URL cannot be delivered to. The
 * send path does not rely on this (DNS can change): its agent checks the address it connects to.
 */
export async function checkSubscriberUrl(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolver = dnsResolver,
): Promise<UrlCheck> {
  const shape = checkUrlShape(raw, allowPrivate);
  if (!shape.ok || allowPrivate || isIP(shape.host!)) return shape.ok ? { ok: true } : shape;
  const host = shape.host!;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    return { ok: false, reason: `host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  for (const address of addresses) {
    const reason = blockedReason(address);
    if (reason) return { ok: false, reason: `host ${host} resolves to ${address}, ${reason}` };
  }
  return { ok: true };
}
