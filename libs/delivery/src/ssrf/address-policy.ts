import ipaddr from 'ipaddr.js';

// Which addresses a subscriber URL may reach. The special-purpose registries (IANA IPv4 and IPv6) are
// classified by ipaddr.js, a maintained library, rather than a hand-kept list: only its `unicast` class is
// public. Where IPv6 embeds an IPv4 address that a translator forwards to (IPv4-mapped, and the NAT64
// well-known prefix 64:ff9b::/96, which in a NAT64 cluster reaches e.g. 169.254.169.254 as
// 64:ff9b::a9fe:a9fe), the embedded address is classified instead. Every other embedding (6to4, Teredo,
// the local-use NAT64 prefix 64:ff9b:1::/48, RFC 6145 translated, IPv4-compatible ::/96) is refused
// outright: none is needed to reach a public webhook receiver, and each can tunnel to a private one.

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/** Canonical text of an IP literal (WHATWG URL rules), or null if it is not one. */
function canonical(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return null;
  try {
    // ipaddr.js reads the deprecated `::a.b.c.d` as IPv4-mapped; the URL parser, like the socket, does not.
    return new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return null;
  }
}

/** Why an address may not be reached, or null if it is a public unicast address. */
export function blockedReason(address: string): string | null {
  const text = canonical(address);
  if (text === null) return 'not an IP address';
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === 'ipv4') return ipv4Reason(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  if (v6.match(IPV4_COMPATIBLE)) return 'an IPv4-compatible IPv6 address (deprecated, ::/96)';
  if (v6.isIPv4MappedAddress()) return embedded(v6.toIPv4Address(), 'IPv4-mapped');
  if (v6.match(NAT64_WELL_KNOWN)) return embedded(new ipaddr.IPv4(v6.toByteArray().slice(12)), 'NAT64');
  const range = v6.range();
  return range === 'unicast' ? null : `a special-purpose IPv6 address (${range})`;
}

function ipv4Reason(v4: ipaddr.IPv4): string | null {
  const range = v4.range();
  return range === 'unicast' ? null : `a special-purpose IPv4 address (${range})`;
}

function embedded(v4: ipaddr.IPv4, how: string): string | null {
  const inner = ipv4Reason(v4);
  return inner === null ? null : `${how} form of ${v4.toString()}, ${inner}`;
}

export const isPublicAddress = (address: string): boolean => blockedReason(address) === null;
