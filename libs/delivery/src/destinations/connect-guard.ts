import dns from 'node:dns';
import { isIP } from 'node:net';
import { blockedReason, BlockedAddressError, guardedLookup } from '../ssrf';
import { ConnectGuard } from './destination';

/**
 * The SSRF rule of HTTP receivers, for brokers: a broker's host must resolve to public addresses only, unless
 * private networks are allowed (DELIVERY_ALLOW_PRIVATE_NETWORKS). The address checked is the one connected to.
 */
export function connectGuard(allowPrivateNetworks: boolean, timeoutMs: number): ConnectGuard {
  return {
    timeoutMs,
    lookup: allowPrivateNetworks ? dns.lookup : guardedLookup(),
    async resolve(host: string): Promise<string> {
      if (isIP(host)) {
        const reason = allowPrivateNetworks ? null : blockedReason(host);
        if (reason) throw new BlockedAddressError(host, host, reason);
        return host;
      }
      const addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
      if (addresses.length === 0) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
      for (const a of addresses) {
        const reason = allowPrivateNetworks ? null : blockedReason(a.address);
        if (reason) throw new BlockedAddressError(host, a.address, reason);
      }
      return addresses[0].address;
    },
  };
}
