import dns from 'node:dns';
import { isIP } from 'node:net';
import { blockedReason, BlockedAddressError, guardedLookup } from '../ssrf';
import { BrokerTarget, ConnectGuard } from './destination';

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

/** A single-host broker's address, resolved through the guard: what its connect dials, and how errors name it. */
export interface ResolvedBroker {
  host: string;
  port: number;
  /** `host:port` as the subscription gave it. */
  where: string;
  /** The address the guard allowed: the socket connects to it (SNI and the certificate check use `host`). */
  address: string;
}

/** Resolves a broker's one host once, through the guard (the SSRF rule); a refusal names the kind and the host. */
export async function resolveBroker(target: BrokerTarget, guard: ConnectGuard): Promise<ResolvedBroker> {
  const { host, port } = target.hosts[0];
  const where = `${host}:${port}`;
  try {
    return { host, port, where, address: await guard.resolve(host) };
  } catch (err) {
    throw new Error(`${target.kind}: could not connect to ${where}: ${(err as Error).message}`, { cause: err });
  }
}
