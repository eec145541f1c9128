import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { DeliveryDestination } from '../destinations/destination';
import { checkUrlShape } from '../ssrf';
import type { WebhookTransport } from './transport';

// OAuth 2 client credentials for HTTP receivers that take a token from an authorization server of theirs
// (docs/destinations.md): the token is fetched by us, with the client's secret, and sent as Bearer.

/** An OAuth 2 client, whole: its settings and its secret. */
export interface OAuthClient {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
}

export function oauthClientOf(destination: DeliveryDestination | undefined): OAuthClient | null {
  const o = destination?.settings.oauth2;
  const clientSecret = destination?.secrets.clientSecret;
  return o && clientSecret !== undefined ? { ...o, clientSecret } : null;
}

/** A token endpoint's refusal or failure, as the attempt's error: never with the secret or the answer's body. */
export class OAuthError extends Error {
  readonly code = 'EOAUTH2';
}

/** A token is used until this long before it expires: time for the request it goes with to arrive. */
export const EXPIRY_MARGIN_S = 30;
/** How long a token whose answer gives no `expires_in` is kept. */
export const DEFAULT_LIFETIME_S = 60;
/** Tokens kept at once (one per client): past this the least recently used is fetched again when next needed. */
const MAX_TOKENS = 1000;
/** A token answer's bytes read: a JWT with many claims is a few KiB. */
const MAX_TOKEN_ANSWER = 64 * 1024;

interface Token {
  value: string;
  expiresAt: number;
}

/**
 * OAuth 2 client credentials tokens (RFC 6749 §4.4), one per client, cached until EXPIRY_MARGIN_S before they
 * expire. Requests for a client whose token is being fetched wait for that fetch rather than start their own: a
 * burst of deliveries asks the endpoint once. The endpoint is reached through the deliveries' own transport, so
 * under the same SSRF guard, and within the attempt's time.
 */
export class OAuthTokens {
  private readonly cache = new LRUCache<string, Token>({ max: MAX_TOKENS });
  private readonly fetching = new Map<string, Promise<Token>>();

  constructor(
    private readonly transport: WebhookTransport,
    private readonly allowPrivateNetworks: boolean,
    private readonly userAgent: string,
    private readonly now: () => number = Date.now,
  ) {}

  async token(c: OAuthClient, timeoutMs: number): Promise<string> {
    const key = cacheKey(c);
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > this.now()) return cached.value;
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = this.fetch(c, timeoutMs)
        .then((t) => {
          if (t.expiresAt > this.now()) this.cache.set(key, t);
          return t;
        })
        .finally(() => this.fetching.delete(key));
      this.fetching.set(key, pending);
    }
    return (await pending).value;
  }

  /** The receiver refused `token` (a 401): forgotten, unless a fresher one has replaced it meanwhile. */
  forget(c: OAuthClient, token: string): void {
    const key = cacheKey(c);
    if (this.cache.peek(key)?.value === token) this.cache.delete(key);
  }

  private async fetch(c: OAuthClient, timeoutMs: number): Promise<Token> {
    const shape = checkUrlShape(c.tokenUrl, this.allowPrivateNetworks);
    if (!shape.ok) throw new OAuthError(`refused by the SSRF guard: the oauth2 token endpoint: ${shape.reason}`);
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (c.scope) form.set('scope', c.scope);
    if (c.audience) form.set('audience', c.audience);
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      'user-agent': this.userAgent,
      // RFC 6749 §2.3.1: the id and secret form-encoded, then as Basic's user and password.
      authorization: `Basic ${Buffer.from(`${formEncoded(c.clientId)}:${formEncoded(c.clientSecret)}`).toString('base64')}`,
    };
    const started = this.now();
    let answer: { status: number; body: string };
    try {
      answer = await this.transport.post(c.tokenUrl, headers, form.toString(), timeoutMs, MAX_TOKEN_ANSWER);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ESSRFBLOCKED')
        throw new OAuthError(`refused by the SSRF guard: the oauth2 token endpoint: ${e.message}`);
      // It had what was left of the attempt's DELIVERY_TIMEOUT_MS: a number of ms here would differ every time.
      if (e.code === 'ETIMEDOUT') throw new OAuthError('oauth2: the token endpoint did not answer in time');
      throw new OAuthError(`oauth2: the token endpoint could not be reached (${e.code ?? e.message})`);
    }
    return tokenOf(answer, started);
  }
}

/** The access token of a token endpoint's answer (RFC 6749 §5.1), or why there is none (§5.2's error code). */
function tokenOf(answer: { status: number; body: string }, receivedAt: number): Token {
  const json = parsed(answer.body);
  if (answer.status < 200 || answer.status >= 300) {
    // Only a standard error code: a description might quote what was sent.
    const code = typeof json.error === 'string' && /^[a-z_]{1,64}$/.test(json.error) ? ` (${json.error})` : '';
    throw new OAuthError(`oauth2: the token endpoint answered ${answer.status}${code}`);
  }
  const value = json.access_token;
  if (typeof value !== 'string' || value === '')
    throw new OAuthError(`oauth2: the token endpoint answered ${answer.status} without an access_token`);
  if (!/^[\x21-\x7e]+$/.test(value))
    throw new OAuthError('oauth2: the access_token has characters a header cannot carry');
  if (typeof json.token_type === 'string' && json.token_type.toLowerCase() !== 'bearer')
    throw new OAuthError('oauth2: the token endpoint issued a token that is not a Bearer token');
  const expiresIn = Number(json.expires_in);
  const lifetimeS =
    json.expires_in != null && Number.isFinite(expiresIn) ? expiresIn - EXPIRY_MARGIN_S : DEFAULT_LIFETIME_S;
  // A lifetime within the margin: used for this attempt, not kept.
  return { value, expiresAt: receivedAt + lifetimeS * 1000 };
}

function parsed(body: string): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(body);
    return json && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const formEncoded = (s: string) => new URLSearchParams([['', s]]).toString().slice(1);

/** One token per endpoint, client, scope and audience, and secret: a new secret is a new client. Hashed. */
const cacheKey = (c: OAuthClient) =>
  createHash('sha256')
    .update(JSON.stringify([c.tokenUrl, c.clientId, c.scope ?? '', c.audience ?? '', c.clientSecret]))
    .digest('base64');
