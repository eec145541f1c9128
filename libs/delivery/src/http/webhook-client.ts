import { LRUCache } from 'lru-cache';
import { LoopHeaders, whyReservedHeader } from '@app/contracts';
import { DeliveryAttempt } from '../domain';
import { HIDDEN_HEADER } from '../custom-headers';
import { credentialsOf, redactCredentials } from '../redaction';
import { parseRetryAfter } from '../retry-schedule';
import { signDelivery } from '../signing';
import type { DeliveryDestination } from '../destinations/destination';
import { checkUrlShape } from '../ssrf';
import { OAuthError, OAuthTokens } from './oauth-tokens';
import { AttemptAuthorization, clientTlsOf, ReceiverAuth, receiverAuthOf } from './receiver-auth';
import type { WebhookTransport } from './transport';
import { AttemptRecord } from './attempt-record';
import { undiciTransport } from './undici-post';

/** One New Plant webhook to send: what the worker's deliveries and the admin API's test sends have in common. */
export interface WebhookRequest {
  url: string;
  /** The `webhook-id`: the same on every attempt of a delivery. */
  messageId: string;
  body: string;
  /** The current signing secret first, then a rotated-out one still inside its overlap. */
  secrets: string[];
  /** The subscriber's own bearer token, sent as Authorization. */
  token: string | null;
  /** The subscription's custom headers (see custom-headers.ts): shown to operators, and secret ones, never shown. */
  headers?: Record<string, string>;
  secretHeaders?: Record<string, string>;
  /** A delivery of a backfill: sent as `plant-store-backfill`. */
  backfillId?: string | null;
  /** This is hop `hops + 1` of the chain started by `originEventId` (see LoopHeaders). */
  hops: number;
  originEventId: string;
  traceparent?: string;
  /** Its settings and secrets, opened: for an HTTP receiver, Basic, OAuth 2 or a client certificate (mTLS). */
  destination?: DeliveryDestination;
}

export interface SendResult extends DeliveryAttempt {
  retryAfterMs: number | null;
}

export const USER_AGENT = 'PlantStore-Webhooks/1.0 (+https://plant.store)';
const MAX_RESPONSE_BYTES = 1024;
/** What an operator is shown in place of a subscriber's token: it is a credential, never displayed or logged. */
export const HIDDEN_TOKEN = 'Bearer [the subscription token, not shown]';
/** In place of the user and password the receiver's URL came with (Basic). */
export const HIDDEN_BASIC = 'Basic [the user and password of the URL, not shown]';
/** In place of an OAuth 2 access token (each attempt's may differ; it is a credential all the same). */
export const HIDDEN_OAUTH2 = 'Bearer [an OAuth 2 access token, not shown]';
const HIDDEN: Record<Exclude<ReceiverAuth, null>, string> = {
  token: HIDDEN_TOKEN,
  basic: HIDDEN_BASIC,
  oauth2: HIDDEN_OAUTH2,
};

/** Marks a delivery of a backfill (the current state of a plant, asked for), naming the backfill. */
export const BACKFILL_HEADER = 'plant-store-backfill';

/**
 * The headers a webhook goes out with, around its Standard Webhooks signature headers. The subscription's custom
 * headers come first: none can replace one of ours (they are refused when saved, and ours are written after), and
 * one saved before its name was reserved (reserved-headers.ts) is left out.
 */
export function webhookHeaders(
  signed: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string },
  r: Pick<WebhookRequest, 'hops' | 'originEventId' | 'traceparent' | 'headers' | 'secretHeaders' | 'backfillId'>,
  authorization: string | null,
): Record<string, string> {
  const headers: Record<string, string> = {
    ...unreserved(r.headers),
    ...unreserved(r.secretHeaders),
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...signed,
    // A Plant Store receiving this carries both on, so that a loop through it dies out (see LoopHeaders).
    [LoopHeaders.hops]: String(r.hops + 1),
    [LoopHeaders.origin]: r.originEventId,
  };
  if (authorization) {
    // One Authorization: a custom one (whatever its case) saved beside Basic or OAuth 2 gives way to ours.
    for (const n of Object.keys(headers)) if (n.toLowerCase() === 'authorization') delete headers[n];
    headers.authorization = authorization;
  }
  // The attempt's own span: a receiver that traces continues the sender's trace.
  if (r.traceparent) headers.traceparent = r.traceparent;
  if (r.backfillId) headers[BACKFILL_HEADER] = r.backfillId;
  return headers;
}

/** Custom headers but the reserved ones: the same rule that refuses them when they are saved. */
function unreserved(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!headers || Object.keys(headers).every((n) => whyReservedHeader(n) === null)) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([n]) => whyReservedHeader(n) === null));
}

/**
 * The headers an attempt went out with, rebuilt for an operator from what was recorded (its time and
 * signature): the subscriber's token (or Basic, or OAuth 2 token: give `destination`) and secret headers hidden,
 * no trace context (each attempt had its own; it is in the trace). The custom headers and destination are the
 * subscription's as they are now. Null for an attempt refused before it was signed.
 */
export function sentHeaders(
  messageId: string,
  attempt: Pick<DeliveryAttempt, 'attemptedAt' | 'signature'>,
  r: Pick<WebhookRequest, 'hops' | 'originEventId' | 'backfillId'>,
  hadToken: boolean,
  custom: { headers: Record<string, string>; secretHeaderNames: string[] } = { headers: {}, secretHeaderNames: [] },
  destination?: DeliveryDestination,
): Record<string, string> | null {
  if (!attempt.signature) return null;
  const signed = {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(new Date(attempt.attemptedAt).getTime() / 1000)),
    'webhook-signature': attempt.signature,
  };
  const secretHeaders = Object.fromEntries(custom.secretHeaderNames.map((n) => [n, HIDDEN_HEADER]));
  const shown = { hops: r.hops, originEventId: r.originEventId, backfillId: r.backfillId };
  const auth = receiverAuthOf(hadToken, destination);
  return webhookHeaders(signed, { ...shown, headers: custom.headers, secretHeaders }, auth ? HIDDEN[auth] : null);
}

/**
 * One HTTP attempt: the SSRF guard (the URL's shape and IP literals here; resolved names inside the agents'
 * lookup, on the address actually connected to), signing, the receiver's authentication (receiver-auth.ts), one
 * timeout for the whole attempt (an OAuth 2 token fetch included: the worker's lease allows DELIVERY_TIMEOUT_MS),
 * no redirects. Never throws: a refusal, a timeout or a reset is an attempt with an error.
 */
export class WebhookClient {
  private readonly transport: WebhookTransport;
  /** OAuth 2 tokens of receivers, shared with Kafka destinations' OAUTHBEARER (DestinationClient). */
  readonly tokens: OAuthTokens;

  /**
   * Each URL's shape check, once: the same few URLs go out thousands of times a second, and the check (a parse,
   * the address rules) depends on the URL alone. Bounded: a new URL past the bound only costs its parse again.
   */
  private readonly shapes = new LRUCache<string, ReturnType<typeof checkUrlShape>>({ max: 4096 });

  constructor(
    private readonly allowPrivateNetworks: boolean,
    private readonly timeoutMs: number,
  ) {
    this.transport = undiciTransport(allowPrivateNetworks);
    this.tokens = new OAuthTokens(this.transport, allowPrivateNetworks, USER_AGENT);
  }

  private shapeOf(url: string): ReturnType<typeof checkUrlShape> {
    let shape = this.shapes.get(url);
    if (!shape) {
      shape = checkUrlShape(url, this.allowPrivateNetworks);
      this.shapes.set(url, shape);
    }
    return shape;
  }

  async send(r: WebhookRequest): Promise<SendResult> {
    const attempt = new AttemptRecord();
    const result = (partial: Partial<SendResult>) => attempt.result(partial);

    const allowed = this.shapeOf(r.url);
    if (!allowed.ok) return result({ error: `refused by the SSRF guard: ${allowed.reason}` });

    const signed = signDelivery(r.secrets, r.messageId, r.body, attempt.at);
    attempt.signature = signed['webhook-signature'];
    const left = () => Math.max(1, Math.round(this.timeoutMs - attempt.elapsedMs()));
    const authorization = new AttemptAuthorization(this.tokens, r);
    const tls = clientTlsOf(r.url, r.destination);
    const post = async () => {
      const headers = webhookHeaders(signed, r, await authorization.header(left()));
      return this.transport.post(r.url, headers, r.body, left(), MAX_RESPONSE_BYTES, tls);
    };
    try {
      let res = await post();
      if (authorization.retryAfter(res.status)) res = await post();
      const retryAfter = res.headers['retry-after'];
      return result({
        status: res.status,
        // An echoing receiver would hand the subscriber's own credentials to whoever reads the attempt. Most
        // answers have no body (a 204): nothing to look through, so the credentials are not even listed.
        responseBody: res.body ? redactCredentials(res.body, credentialsOf(r, authorization.accessTokens)) : null,
        retryAfterMs: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null),
      });
    } catch (err) {
      if (err instanceof OAuthError) return result({ error: err.message });
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ESSRFBLOCKED') return result({ error: `refused by the SSRF guard: ${e.message}` });
      // The attempt's time is one budget, whatever part of it ran out.
      return result({ error: e.code === 'ETIMEDOUT' ? `timed out after ${this.timeoutMs} ms` : (e.code ?? e.message) });
    }
  }

  /** Closes the kept-alive connections (a gateway or worker shutting down leaves none open). */
  close(): Promise<void> {
    return this.transport.close();
  }
}
