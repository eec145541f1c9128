import type { DeliveryDestination, DestinationSecrets } from '../destinations/destination';
import { OAuthClient, oauthClientOf, OAuthTokens } from './oauth-tokens';
import type { ClientTls } from './transport';

// How an HTTP receiver knows it is us (docs/destinations.md, "Authenticated HTTP receivers"): the subscription's
// token, the user and password its URL came with (Basic), an OAuth 2 client's token, and at the TLS layer a client
// certificate. One Authorization at most: the gateway refuses a token beside Basic or OAuth 2.

export type ReceiverAuth = 'oauth2' | 'basic' | 'token' | null;

/**
 * Which Authorization a request carries. Should a token have been set later beside Basic or OAuth 2 (the gateway
 * refuses both at once when the URL is saved), the destination's own wins: it came with the URL it is for.
 */
export function receiverAuthOf(hasToken: boolean, destination: DeliveryDestination | undefined): ReceiverAuth {
  if (destination?.settings.oauth2 && destination.secrets.clientSecret !== undefined) return 'oauth2';
  if (destination && hasBasic(destination.secrets)) return 'basic';
  return hasToken ? 'token' : null;
}

export const hasBasic = (s: DestinationSecrets) => Boolean(s.username || s.password);

/** RFC 7617: `user:password`, base64. */
export const basicAuthorization = (s: DestinationSecrets) =>
  `Basic ${Buffer.from(`${s.username ?? ''}:${s.password ?? ''}`).toString('base64')}`;

/** The CA and client certificate an https receiver is connected with (none for http://, where there is no TLS). */
export function clientTlsOf(url: string, destination: DeliveryDestination | undefined): ClientTls | undefined {
  const tls = destination?.settings.tls;
  if (!tls || !/^https:/i.test(url)) return undefined;
  return { ca: tls.ca, cert: tls.cert, key: destination.secrets.key, rejectUnauthorized: tls.rejectUnauthorized };
}

/**
 * The Authorization of one attempt, asked for when its request is made: an OAuth 2 token is fetched (or taken
 * from the cache) then, and a fresh one after a 401.
 */
export class AttemptAuthorization {
  readonly kind: ReceiverAuth;
  /** The OAuth 2 tokens sent: credentials an echoing receiver's answer is cleaned of. */
  readonly accessTokens: string[] = [];
  private readonly oauth: OAuthClient | null;
  private retried = false;

  constructor(
    private readonly tokens: OAuthTokens,
    private readonly r: { token: string | null; destination?: DeliveryDestination },
  ) {
    this.kind = receiverAuthOf(r.token !== null, r.destination);
    this.oauth = this.kind === 'oauth2' ? oauthClientOf(r.destination) : null;
  }

  async header(timeoutMs: number): Promise<string | null> {
    if (this.kind === 'token') return `Bearer ${this.r.token}`;
    if (this.kind === 'basic') return basicAuthorization(this.r.destination!.secrets);
    if (!this.oauth) return null;
    const token = await this.tokens.token(this.oauth, timeoutMs);
    this.accessTokens.push(token);
    return `Bearer ${token}`;
  }

  /**
   * Whether to send once more after this answer: a 401 to an OAuth 2 token, the first time. The token may have
   * been revoked or have expired early: it is dropped, and the next `header` fetches a fresh one. Within the
   * attempt, rather than after minutes of the retry schedule for what a second's fetch mends.
   */
  retryAfter(status: number): boolean {
    if (status !== 401 || !this.oauth || this.retried) return false;
    this.retried = true;
    this.tokens.forget(this.oauth, this.accessTokens[0]);
    return true;
  }
}
