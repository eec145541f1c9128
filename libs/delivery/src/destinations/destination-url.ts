import {
  BrokerKind,
  BrokerTarget,
  DestinationKind,
  DestinationSecrets,
  DestinationSettings,
  HostPort,
} from './destination';

interface Scheme {
  kind: DestinationKind;
  tls: boolean;
  port: number;
  /** The query options the kind takes (anything else is refused, naming it). */
  options: string[];
}

/** The URL schemes a subscription may use, and what each selects. */
export const SCHEMES: Record<string, Scheme> = {
  http: { kind: 'http', tls: false, port: 80, options: [] },
  https: { kind: 'http', tls: true, port: 443, options: [] },
  kafka: { kind: 'kafka', tls: false, port: 9092, options: [] },
  amqp: { kind: 'amqp', tls: false, port: 5672, options: ['exchange', 'routingKey'] },
  amqps: { kind: 'amqp', tls: true, port: 5671, options: ['exchange', 'routingKey'] },
  nats: { kind: 'nats', tls: false, port: 4222, options: [] },
  mqtt: { kind: 'mqtt', tls: false, port: 1883, options: [] },
  mqtts: { kind: 'mqtt', tls: true, port: 8883, options: [] },
  redis: { kind: 'redis', tls: false, port: 6379, options: ['db'] },
  rediss: { kind: 'redis', tls: true, port: 6379, options: ['db'] },
  // Amazon SQS over HTTPS; sqs+http:// for an SQS-compatible server over plain HTTP (ElasticMQ, LocalStack).
  sqs: { kind: 'sqs', tls: true, port: 443, options: ['region'] },
  'sqs+http': { kind: 'sqs', tls: false, port: 80, options: ['region'] },
};

const SUPPORTED = Object.keys(SCHEMES).join(', ');

/** What the path of each kind names, and the rule it must meet. */
const PATHS: Record<BrokerKind, { names: string; rule: RegExp; why: string }> = {
  kafka: { names: 'topic', rule: /^[A-Za-z0-9._-]{1,249}$/, why: 'letters, digits, ".", "_" and "-", at most 249' },
  amqp: { names: 'vhost', rule: /^[^\0]{0,255}$/, why: 'at most 255 characters' },
  nats: { names: 'subject', rule: /^[^\s.*>]+(\.[^\s.*>]+)*$/, why: 'dot-separated tokens, no spaces or wildcards' },
  mqtt: { names: 'topic', rule: /^[^+#\0]{1,1024}$/, why: 'no "+" or "#" wildcards, at most 1,024 characters' },
  redis: { names: 'stream key', rule: /^.{1,512}$/s, why: 'at most 512 characters' },
  // SQS's own rule for a queue name: at most 80 characters, ".fifo" included; the account is AWS's 12 digits, or
  // what an SQS-compatible server puts there (ElasticMQ: 000000000000 or "queue").
  sqs: {
    names: 'account-id/queue-name',
    rule: /^[A-Za-z0-9_-]{1,64}\/(?=[^/]{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/,
    why: 'the queue name after the account id is letters, digits, "-" and "_", at most 80 characters with ".fifo"',
  },
};

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The scheme of a URL, lower-cased, without its colon; null when there is none. */
const schemeOf = (raw: string) => /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(raw)?.[1].toLowerCase() ?? null;

/** A stored URL's kind (stored ones were checked; one from before a scheme was known reads as http). */
export function destinationKindOf(url: string): DestinationKind {
  const kind = destinationKind(url);
  return kind.ok ? kind.value : 'http';
}

/** The kind a URL selects, or why none: an unknown scheme names the ones there are. */
export function destinationKind(raw: string): Parsed<DestinationKind> {
  const scheme = schemeOf(raw);
  if (scheme === null) return { ok: false, reason: `is not a URL: it must start with a scheme (${SUPPORTED})` };
  const known = SCHEMES[scheme];
  if (!known) return { ok: false, reason: `has the scheme "${scheme}", which is not one of ${SUPPORTED}` };
  return { ok: true, value: known.kind };
}

/**
 * A broker URL as kind, hosts, path and options; its user and password go to the target's secrets (they are
 * stored sealed, apart from the URL: see withoutCredentials). Kafka takes several hosts, comma-separated.
 */
export function parseBrokerUrl(
  raw: string,
  settings: DestinationSettings = {},
  secrets: DestinationSecrets = {},
): Parsed<BrokerTarget> {
  const scheme = schemeOf(raw);
  const known = scheme ? SCHEMES[scheme] : undefined;
  if (!known || known.kind === 'http') return { ok: false, reason: destinationKindReason(raw) };
  const kind = known.kind;
  const m = /^[^:]+:\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/.exec(raw);
  if (!m) return { ok: false, reason: 'is not a valid URL' };
  const [, userinfo, authority, rawPath, query, fragment] = m;
  if (fragment) return { ok: false, reason: 'may not have a fragment (#…)' };
  const hosts: HostPort[] = [];
  const parts = authority.split(',');
  if (parts.length > 1 && kind !== 'kafka') return { ok: false, reason: `takes one host (only kafka:// takes a list)` };
  for (const part of parts) {
    let u: URL;
    try {
      u = new URL(`http://${part}`);
    } catch {
      return { ok: false, reason: `has a host that is not valid: "${part}"` };
    }
    if (!u.hostname || u.pathname !== '/' || u.search)
      return { ok: false, reason: `has a host that is not valid: "${part}"` };
    // kafkajs splits a broker on ":", so an IPv6 literal cannot be one: a name that resolves to it can.
    if (kind === 'kafka' && u.hostname.startsWith('['))
      return { ok: false, reason: 'has an IPv6 address as a Kafka broker: give a name that resolves to it' };
    hosts.push({ host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : known.port });
  }
  let path: string;
  try {
    path = decodeURIComponent(rawPath.replace(/^\//, ''));
  } catch {
    return { ok: false, reason: 'has a path that is not valid percent-encoding' };
  }
  const rule = PATHS[kind];
  if (kind !== 'amqp' && path === '')
    return { ok: false, reason: `needs the ${rule.names} as its path (${scheme}://host/${rule.names})` };
  const a = /^[aeiou]/.test(rule.names) ? 'an' : 'a';
  if (!rule.rule.test(path)) return { ok: false, reason: `has ${a} ${rule.names} that is not valid: ${rule.why}` };
  const options: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(query ?? '')) {
    if (!known.options.includes(name))
      return {
        ok: false,
        reason: `has the option "${name}", which ${scheme}:// does not take (${known.options.join(', ') || 'none'})`,
      };
    options[name] = value;
  }
  if (kind === 'amqp' && !options.exchange && !options.routingKey)
    return { ok: false, reason: 'needs ?routingKey=<queue> (the default exchange) or ?exchange=<name>[&routingKey=…]' };
  if (kind === 'redis' && options.db !== undefined && !/^\d{1,2}$/.test(options.db))
    return { ok: false, reason: 'has a db that is not a number from 0 to 99' };
  const fromUrl = userinfo ? credentialsOfUserinfo(userinfo) : {};
  if (kind === 'sqs') {
    const why = sqsRegionProblem(hosts[0].host, options);
    if (why) return { ok: false, reason: why };
  }
  return {
    ok: true,
    value: {
      kind,
      tls: known.tls || settings.tls !== undefined,
      hosts,
      path,
      options,
      settings,
      secrets: { ...secrets, ...fromUrl },
    },
  };
}

/** Where an AWS endpoint names its region: sqs.<region>.amazonaws.com (.cn, FIPS, dual-stack), <region>.queue… */
const AWS_SQS_HOST =
  /^(?:sqs(?:-fips)?\.([a-z0-9-]+)\.(?:amazonaws\.com(?:\.cn)?|api\.aws)|([a-z0-9-]+)\.queue\.amazonaws\.com)$/i;

/** The region an SQS endpoint's host names, or null (an SQS-compatible server's host names none). */
export function sqsRegionOfHost(host: string): string | null {
  const m = AWS_SQS_HOST.exec(host);
  return m ? (m[1] ?? m[2]).toLowerCase() : null;
}

/** SigV4 signs for a region: `?region=` or the one the host names, set as options.region; or why there is none. */
function sqsRegionProblem(host: string, options: Record<string, string>): string | null {
  const ofHost = sqsRegionOfHost(host);
  if (options.region !== undefined && !/^[a-z0-9-]{1,32}$/.test(options.region))
    return 'has a region that is not valid: lower-case letters, digits and "-" (eu-west-1)';
  if (options.region && ofHost && options.region !== ofHost)
    return `has ?region=${options.region}, but its host is the endpoint of ${ofHost}: give one of them`;
  const region = options.region || ofHost;
  if (!region)
    return `needs ?region=<region>: its host "${host}" does not name one (as sqs.<region>.amazonaws.com does)`;
  options.region = region;
  return null;
}

/**
 * Why an SQS destination cannot sign, or null: the key and secret are required (the URL's user and password).
 * Without them the SDK would sign with whatever AWS identity the worker itself has: never.
 */
export function sqsCredentialsProblem(secrets: DestinationSecrets): string | null {
  if (secrets.username && secrets.password) return null;
  return 'needs the access key id and secret access key as its user and password (sqs://KEY_ID:SECRET@host/…)';
}

function destinationKindReason(raw: string): string {
  const kind = destinationKind(raw);
  return kind.ok ? 'is an HTTP URL, not a broker' : kind.reason;
}

function credentialsOfUserinfo(userinfo: string): DestinationSecrets {
  const at = userinfo.indexOf(':');
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  if (at < 0) return { username: decode(userinfo) };
  return { username: decode(userinfo.slice(0, at)), password: decode(userinfo.slice(at + 1)) };
}

/** The user and password a URL carries (a broker's login, or an HTTP receiver's Basic auth). */
export function credentialsInUrl(raw: string): DestinationSecrets {
  const m = /^[^:]+:\/\/([^@/?#]*)@/.exec(raw);
  return m ? credentialsOfUserinfo(m[1]) : {};
}

/** The URL as it is stored and shown: without its user and password. */
export function withoutCredentials(raw: string): string {
  return raw.replace(/^([^:]+:\/\/)[^@/?#]*@/, '$1');
}
