// The headers a subscription may not set as its own custom headers, each with why. One list: the check that refuses
// them (libs/delivery's customHeaderProblems, 422 naming the header) and the document that tells clients which
// they are (openapi/schemas.ts) both read it here, so they cannot disagree.

const HOP_BY_HOP = 'is a hop-by-hop header: it describes one connection, not the delivery';
const SENDER_SETS = 'is set by Plant Store on every delivery';
// A receiver behind a proxy believes these about where a request came from (client address, scheme, host): set
// through a subscription's settings (by a portal link's holder, say), they would forge that for the receiver.
const PROXY_SAYS = "is written by the proxies a request passes through: a receiver trusts it as its own proxy's word";

/** Reserved names, lower case. */
export const RESERVED_HEADERS: Readonly<Record<string, string>> = {
  connection: HOP_BY_HOP,
  'keep-alive': HOP_BY_HOP,
  te: HOP_BY_HOP,
  trailer: HOP_BY_HOP,
  'transfer-encoding': HOP_BY_HOP,
  upgrade: HOP_BY_HOP,
  host: 'is taken from the subscription URL',
  'content-length': 'frames the signed body: Plant Store sets it',
  'content-type': 'is application/json, the signed body: Plant Store sets it',
  'content-encoding': 'would change what the signed body means: Plant Store sends it unencoded',
  expect: 'would hold the body back waiting for the receiver: Plant Store sends it at once',
  'user-agent': SENDER_SETS,
  traceparent: `${SENDER_SETS} (each attempt's own trace context)`,
  tracestate: `${SENDER_SETS} (each attempt's own trace context)`,
  // A browser's session state: a receiver that authenticates by it would take a delivery for a signed-in user.
  cookie: 'carries a browser session, not a delivery: send a credential as a secret header (X-Api-Key, say)',
  forwarded: PROXY_SAYS,
};

/** Reserved prefixes, lower case: every name that starts so. */
export const RESERVED_HEADER_PREFIXES: readonly (readonly [prefix: string, why: string])[] = [
  ['proxy-', HOP_BY_HOP],
  ['x-forwarded-', PROXY_SAYS],
  ['webhook-', 'is a Standard Webhooks header (webhook-id, webhook-timestamp, webhook-signature): Plant Store signs'],
  ['plant-store-', 'is a Plant Store header (loop protection, backfill): Plant Store sets it'],
];

/** Why `name` (any case) cannot be a custom header, or null when it can. */
export function whyReservedHeader(name: string): string | null {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS[lower] ?? RESERVED_HEADER_PREFIXES.find(([p]) => lower.startsWith(p))?.[1] ?? null;
}

/** The reserved names for a reader: `connection`, …, `proxy-*`, … */
export const RESERVED_HEADER_LIST = [
  ...Object.keys(RESERVED_HEADERS),
  ...RESERVED_HEADER_PREFIXES.map(([p]) => `${p}*`),
]
  .map((n) => `\`${n}\``)
  .join(', ');
