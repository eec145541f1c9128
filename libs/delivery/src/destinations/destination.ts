// Where a New Plant goes: the subscription's URL scheme selects the kind of destination (docs/destinations.md).
// HTTP receivers are sent to by WebhookClient (../http); every other kind is a broker, reached through a
// BrokerConnection of its own kind, pooled per broker (destination-pool.ts).

export const BROKER_KINDS = ['kafka', 'amqp', 'nats', 'mqtt', 'redis', 'sqs'] as const;
export type BrokerKind = (typeof BROKER_KINDS)[number];
export type DestinationKind = 'http' | BrokerKind;

/**
 * What a URL cannot carry well, beside the subscription's `url` (the `destination` object of the API). Nothing
 * here is a secret: a client key, passwords and a client secret are DestinationSecrets.
 */
export interface DestinationSettings {
  /**
   * TLS to the broker or HTTPS receiver: its CA (PEM) when not a public one, a client certificate (PEM; its key is
   * a secret).
   */
  tls?: { ca?: string; cert?: string; rejectUnauthorized?: boolean };
  /**
   * Kafka: the SASL mechanism the URL's user and password are sent with (plain by default); `oauthbearer` sends a
   * token from `oauth2` instead (no user and password).
   */
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512' | 'oauthbearer' };
  /** Redis: the stream is trimmed to about this many entries (XADD MAXLEN ~). */
  maxLen?: number;
  /**
   * HTTP(S) and Kafka with SASL OAUTHBEARER: OAuth 2 client credentials. A token from `tokenUrl` is sent as
   * `Authorization: Bearer` (or as the SASL token); its client secret is a secret (DestinationSecrets.clientSecret).
   */
  oauth2?: { tokenUrl: string; clientId: string; scope?: string; audience?: string };
}

/**
 * A destination's credentials: the URL's user and password (for HTTP, sent as Basic), a client key, an OAuth 2
 * client secret. Stored sealed, never shown.
 */
export interface DestinationSecrets {
  username?: string;
  password?: string;
  /** The client certificate's private key (PEM). */
  key?: string;
  /** OAuth 2's client secret (HTTP(S), Kafka OAUTHBEARER), sent to the token endpoint only. */
  clientSecret?: string;
}

/** A subscription's destination beside its URL: its settings, and its secrets opened (never logged nor shown). */
export interface DeliveryDestination {
  settings: DestinationSettings;
  secrets: DestinationSecrets;
}

export interface HostPort {
  host: string;
  port: number;
}

/** A broker destination, parsed: where to connect and what to publish to. */
export interface BrokerTarget {
  kind: BrokerKind;
  /** TLS on (amqps, mqtts, rediss, sqs, or settings.tls given). */
  tls: boolean;
  /** One or more (Kafka: a bootstrap list). */
  hosts: HostPort[];
  /**
   * The topic (Kafka, MQTT), subject (NATS), stream key (Redis), `account-id/queue-name` (SQS), or for AMQP the
   * vhost; AMQP's exchange and routing key are in `options`.
   */
  path: string;
  /** The URL's query: options of its kind (amqp: exchange, routingKey; redis: db; sqs: region, always set). */
  options: Record<string, string>;
  settings: DestinationSettings;
  secrets: DestinationSecrets;
}

/** One message to a broker: the webhook's body, the headers it would carry over HTTP, its key and id. */
export interface BrokerMessage {
  /** The plant's id: the Kafka key, so one plant's messages keep their order in one partition. */
  key: string;
  /** The `webhook-id`: the message id where the protocol has one (AMQP message-id, JetStream Nats-Msg-Id). */
  messageId: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * A connection to one broker, opened by its kind's `connect`. `publish` resolves with what the broker answered
 * when it has taken the message for good (Kafka acks=all, an AMQP confirm, a JetStream ack, an MQTT PUBACK, an
 * XADD id) and rejects with an Error saying why otherwise. `broken` once the connection is lost: the pool drops it
 * and opens a new one, after a backoff.
 */
export interface BrokerConnection {
  /**
   * `to`: where on this broker (its topic, subject, stream key, routing key): one connection serves every
   * destination of its broker and credentials (the pool's key), so the place is per message, not per connection.
   */
  publish(message: BrokerMessage, to: BrokerTarget): Promise<string>;
  readonly broken: boolean;
  close(): Promise<void>;
}

/**
 * Where a broker's names may lead: `resolve` gives the address to connect to for a host, refusing one that is not
 * public unless private networks are allowed (the SSRF rule of HTTP receivers); `lookup` does the same inside a
 * socket's own connect (for Kafka, whose brokers name each other).
 */
export interface ConnectGuard {
  resolve(host: string): Promise<string>;
  lookup: import('node:net').LookupFunction;
  /** How long a connect or a publish may take before it is an error. */
  timeoutMs: number;
  /**
   * OAuth 2 client-credentials tokens (Kafka's SASL OAUTHBEARER), from the cache HTTP receivers' tokens come from:
   * fetched under the same SSRF rule, one fetch for a burst of connections.
   */
  tokens?: OAuthTokenSource;
}

/** Gives a client's token (cached until shortly before it expires), and forgets one the broker refused. */
export interface OAuthTokenSource {
  token(client: import('../http/oauth-tokens').OAuthClient, timeoutMs: number): Promise<string>;
  forget(client: import('../http/oauth-tokens').OAuthClient, token: string): void;
}

export type ConnectBroker = (target: BrokerTarget, guard: ConnectGuard) => Promise<BrokerConnection>;
