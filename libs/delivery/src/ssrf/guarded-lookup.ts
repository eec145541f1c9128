import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { blockedReason } from './address-policy';

export class BlockedAddressError extends Error {
  readonly code = 'ESSRFBLOCKED';
  constructor(host: string, address: string, reason: string) {
    super(`${host} resolves to ${address}, ${reason}`);
    this.name = 'BlockedAddressError';
  }
}

type Resolve = typeof dns.lookup;

/**
 * A `lookup` for an HTTP agent that refuses to connect when the host resolves to an address that is not
 * public. The address checked is the address the socket connects to: there is no second resolution for a
 * rebinding DNS server to answer differently (Svix checks inside its HTTP client's resolver the same way).
 * Node calls it with `all: true` when it races address families, and without it otherwise.
 */
export function guardedLookup(resolve: Resolve = dns.lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as dns.LookupAddress[];
      for (const a of list) {
        const reason = blockedReason(a.address);
        if (reason) return callback(new BlockedAddressError(hostname, a.address, reason), '', 0);
      }
      if (list.length === 0)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if ((options as dns.LookupOptions).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
