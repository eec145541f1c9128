import type { OauthbearerProviderResponse } from 'kafkajs';
import type { KafkaEnv } from '@app/config';

/** A token endpoint that refused or failed: named by its variable, never with the secret. */
export class OAuthTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthTokenError';
  }
}

export interface ClientCredentials {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  extensions?: Record<string, string>;
}

/** A token is replaced once this share of its lifetime has passed (Kafka's Java client refreshes at 80 %). */
const REFRESH_AT = 0.8;
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * kafkajs's `oauthBearerProvider` for the OAuth 2.0 client-credentials grant (RFC 6749 §4.4): kafkajs calls it
 * for every connection it authenticates and again before the broker's session expires (KIP-368
 * re-authentication); one token serves them all until 80 % of its lifetime has passed, and a single request
 * refreshes it however many connections ask at once. Amazon MSK IAM or any other token source plugs in by
 * replacing this function (docs/kafka-security.md).
 */
export function clientCredentialsProvider(
  cc: ClientCredentials,
  now: () => number = Date.now,
): () => Promise<OauthbearerProviderResponse> {
  let current: { value: string; refreshAt: number } | null = null;
  let fetching: Promise<{ value: string; refreshAt: number }> | null = null;
  return async () => {
    if (!current || now() >= current.refreshAt) {
      fetching ??= fetchToken(cc, now).finally(() => (fetching = null));
      current = await fetching;
    }
    return { value: current.value, ...(cc.extensions ? { extensions: cc.extensions } : {}) };
  };
}

async function fetchToken(cc: ClientCredentials, now: () => number) {
  const where = `the OAuth token endpoint KAFKA_SASL_OAUTHBEARER_TOKEN_URL=${cc.tokenUrl}`;
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (cc.scope) body.set('scope', cc.scope);
  const basic = Buffer.from(`${encodeURIComponent(cc.clientId)}:${encodeURIComponent(cc.clientSecret)}`);
  const asked = now();
  let res: Response;
  try {
    res = await fetch(cc.tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic.toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    throw new OAuthTokenError(`${where} did not answer (${(err as Error).cause ?? (err as Error).message})`);
  }
  const payload = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof payload.access_token !== 'string') {
    // RFC 6749 §5.2: `error` (invalid_client, invalid_scope…) says which setting is wrong; never echo more.
    const error = typeof payload.error === 'string' ? ` ${payload.error.slice(0, 60)}` : '';
    throw new OAuthTokenError(
      `${where} refused the client credentials (HTTP ${res.status}${error}): check ` +
        'KAFKA_SASL_OAUTHBEARER_CLIENT_ID, KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET and KAFKA_SASL_OAUTHBEARER_SCOPE',
    );
  }
  const lifetimeS =
    typeof payload.expires_in === 'number' ? payload.expires_in : jwtLifetime(payload.access_token, asked);
  return { value: payload.access_token, refreshAt: asked + Math.max(1, lifetimeS ?? 300) * 1000 * REFRESH_AT };
}

/** Without `expires_in`, a JWT's own `exp` (seconds since the epoch) gives its lifetime. */
function jwtLifetime(token: string, asked: number): number | undefined {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { exp?: number };
    return typeof claims.exp === 'number' ? claims.exp - asked / 1000 : undefined;
  } catch {
    return undefined;
  }
}

const providers = new Map<string, () => Promise<OauthbearerProviderResponse>>();

/** One provider (one cached token) per process and client id, shared by every kafkajs client of the app. */
export function oauthBearerProviderFor(c: KafkaEnv): () => Promise<OauthbearerProviderResponse> {
  const cc: ClientCredentials = {
    tokenUrl: c.KAFKA_SASL_OAUTHBEARER_TOKEN_URL!,
    clientId: (c.KAFKA_SASL_OAUTHBEARER_CLIENT_ID ?? c.KAFKA_SASL_OAUTHBEARER_CLIENT_ID_FILE)!,
    clientSecret: (c.KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET ?? c.KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE)!,
    scope: c.KAFKA_SASL_OAUTHBEARER_SCOPE,
    extensions: c.KAFKA_SASL_OAUTHBEARER_EXTENSIONS,
  };
  const key = JSON.stringify([cc.tokenUrl, cc.clientId, cc.scope, cc.extensions]);
  let provider = providers.get(key);
  if (!provider) providers.set(key, (provider = clientCredentialsProvider(cc)));
  return provider;
}
