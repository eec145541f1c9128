/**
 * What an operator (or a read-only token) is shown of a subscriber's credentials: nothing. A receiver that
 * echoes its request (many test endpoints do) puts the subscription's token, or the credentials its URL
 * carries, into the response excerpt an attempt records; a URL may carry credentials in its user-info or
 * query. These functions take them out where the excerpt is built and where a URL is shown or kept.
 */
import type { DestinationSecrets } from './destinations/destination';

export const REDACTED = '[redacted]';

/** Query values shorter than this are not taken for credentials (`?v=1`, `?format=json`): too common to hide. */
const MIN_QUERY_SECRET = 8;
/** A cut-off excerpt may end with the start of a credential: hidden from this many characters on. */
const MIN_PARTIAL = 4;

/**
 * The credentials a request to `url` with `token` and secret headers carries, as a receiver might echo them
 * back; with its destination's (the user and password sent as Basic, an OAuth 2 client secret) and the OAuth 2
 * `accessTokens` it was sent with.
 */
export function credentialsOf(
  r: {
    url: string;
    token: string | null;
    secretHeaders?: Record<string, string>;
    destination?: { secrets: DestinationSecrets };
  },
  accessTokens: string[] = [],
): string[] {
  const found: string[] = [];
  const tokens = [r.token, ...accessTokens].filter((t): t is string => Boolean(t));
  for (const t of tokens) found.push(t, `Bearer ${t}`);
  for (const value of Object.values(r.secretHeaders ?? {})) if (value.length >= MIN_PARTIAL) found.push(value);
  const secrets = r.destination?.secrets ?? {};
  if (secrets.username || secrets.password) {
    const pair = `${secrets.username ?? ''}:${secrets.password ?? ''}`;
    found.push(pair, Buffer.from(pair).toString('base64'));
  }
  for (const s of [secrets.password, secrets.clientSecret]) if (s && s.length >= MIN_PARTIAL) found.push(s);
  const url = parseUrl(r.url);
  if (url) {
    const user = decode(url.username);
    const password = decode(url.password);
    if (url.username || url.password) {
      found.push(`${user}:${password}`, Buffer.from(`${user}:${password}`).toString('base64'));
      if (password) found.push(password, url.password);
    }
    for (const [, value] of url.searchParams) if (value.length >= MIN_QUERY_SECRET) found.push(value);
    for (const raw of url.search.slice(1).split('&')) {
      const value = raw.slice(raw.indexOf('=') + 1);
      if (raw.includes('=') && value.length >= MIN_QUERY_SECRET) found.push(value);
    }
  }
  // Each as sent, and as an echo may write it: percent-encoded, JSON-escaped, base64 (a token in Basic).
  const forms = found.flatMap((c) => [c, encodeURIComponent(c), JSON.stringify(c).slice(1, -1)]);
  for (const t of tokens) forms.push(Buffer.from(t).toString('base64'));
  return [...new Set(forms.filter((c) => c.length > 0))].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every occurrence of each credential replaced by REDACTED, and a tail that is the start of one
 * (the excerpt was cut inside it) too. Credentials longest first, so one inside another goes whole.
 */
export function redactCredentials(text: string, credentials: string[]): string {
  let out = text;
  for (const c of credentials) if (out.includes(c)) out = out.split(c).join(REDACTED);
  for (const c of credentials) {
    for (let n = Math.min(c.length - 1, out.length); n >= MIN_PARTIAL; n--) {
      if (out.endsWith(c.slice(0, n))) {
        out = out.slice(0, out.length - n) + REDACTED;
        break;
      }
    }
  }
  return out;
}

/** Origin and path only: what the audit trail keeps of a subscriber URL (no user-info, query or fragment). */
export function urlOriginAndPath(url: string): string {
  const u = parseUrl(url);
  return u ? `${originOf(u)}${u.pathname}` : REDACTED;
}

/**
 * A subscriber URL as a read-only token sees it: no user-info, each query value hidden (its name shown, so two
 * subscriptions to one path can be told apart), no fragment. A write token sees the URL whole: it may change it.
 */
export function urlForReader(url: string): string {
  const u = parseUrl(url);
  if (!u) return REDACTED;
  const query = u.search
    .slice(1)
    .split('&')
    .filter((p) => p.length > 0)
    .map((p) => (p.includes('=') ? `${p.slice(0, p.indexOf('='))}=${REDACTED}` : REDACTED)); // `?sk_live_…` alone
  return `${originOf(u)}${u.pathname}${query.length > 0 ? `?${query.join('&')}` : ''}`;
}

/** `origin` is "null" for a broker's scheme (kafka://…): the scheme and host, written out. */
const originOf = (u: URL) => `${u.protocol}//${u.host}`;

/** A URL, parsed; a Kafka URL's list of hosts (`a:9092,b:9092`, which URL refuses) is read as its first. */
function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    const hosts = /^([^:]+:\/\/(?:[^@/?#]*@)?)([^/?#,]*),[^/?#]*(.*)$/.exec(url);
    if (!hosts) return null;
    try {
      return new URL(`${hosts[1]}${hosts[2]}${hosts[3]}`);
    } catch {
      return null;
    }
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
