// Schemas of a subscription's destination beyond its URL (docs/destinations.md): what a URL cannot carry well. The
// URL's scheme selects the kind; its user and password, a client key and an OAuth 2 client secret are sealed and
// never shown.
import { always, ref } from './common';

export const DESTINATION_SCHEMES = 'http, https, kafka, amqp, amqps, nats, mqtt, mqtts, redis, rediss, sqs, sqs+http';

const pem = (what: string) => ({ type: 'string', maxLength: 16384, pattern: '-----BEGIN ', description: what });

export const SubscriptionDestination = {
  type: 'object',
  additionalProperties: false,
  description:
    "A destination's settings beside its URL. The URL carries the user and password " +
    '(`amqp://user:pass@host/vhost?routingKey=q`; for http(s), `https://user:pass@host/path` is sent as Basic ' +
    'auth): they are sealed at rest, never shown (a subscription shows `destination.hasCredentials`) and never ' +
    'logged. An HTTP receiver takes `tls` (https: its CA, a client certificate: mTLS) and `oauth2`; a broker ' +
    'takes `tls`, `sasl` and `oauth2` (kafka) and `maxLen` (redis). One Authorization at most: a `token` beside Basic or ' +
    '`oauth2` is a 422. A change of `url` replaces the credentials with those the new URL carries, and ' +
    '`destination` with the one given (none when absent): they never stay behind for another address.',
  properties: {
    tls: {
      type: 'object',
      additionalProperties: false,
      description:
        'TLS to the broker (on already for amqps, mqtts, rediss) or https receiver: a CA and a client certificate',
      properties: {
        ca: pem("The broker's or receiver's CA (PEM) when it is not a public one"),
        cert: pem('A client certificate (PEM), for a broker or receiver that asks for one (with its key)'),
        key: {
          ...pem("The client certificate's private key (PEM): sealed at rest, never shown"),
          writeOnly: true,
        },
        rejectUnauthorized: { type: 'boolean', default: true, description: 'false accepts any certificate' },
      },
    },
    sasl: {
      type: 'object',
      additionalProperties: false,
      required: ['mechanism'],
      description:
        "kafka: the SASL mechanism the URL's user and password are sent with (plain when absent); `oauthbearer` " +
        'sends a token of the `oauth2` client instead (no user and password in the URL; TLS required)',
      properties: { mechanism: { type: 'string', enum: ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] } },
    },
    oauth2: {
      type: 'object',
      additionalProperties: false,
      required: ['tokenUrl', 'clientId'],
      description:
        'http(s), and kafka with `sasl.mechanism` oauthbearer: OAuth 2 client credentials (RFC 6749 §4.4). A token ' +
        'from `tokenUrl` is sent as `Authorization: Bearer` (kafka: as the SASL token), kept until 30 s before it ' +
        'expires, fetched again once on a 401 (kafka: when the broker refuses it). `clientSecret` is required when ' +
        'writing: sealed at rest, never shown',
      properties: {
        tokenUrl: {
          type: 'string',
          pattern: '^https?://',
          maxLength: 2048,
          description: 'The token endpoint: under the SSRF rule of receivers (a public address)',
        },
        clientId: { type: 'string', minLength: 1, maxLength: 1024 },
        clientSecret: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          writeOnly: true,
          description: 'Sent to the token endpoint only (HTTP Basic): sealed at rest, never shown',
        },
        scope: { type: 'string', minLength: 1, maxLength: 2048, description: 'Space-separated scopes to ask for' },
        audience: { type: 'string', minLength: 1, maxLength: 2048, description: 'An `audience` to ask for' },
      },
    },
    maxLen: {
      type: 'integer',
      minimum: 1,
      maximum: 100000000,
      description: 'redis: the stream is trimmed to about this many entries (XADD MAXLEN ~; 100,000 when absent)',
    },
  },
};

/** What a subscription shows of its destination. */
export const SubscriptionDestinationShown = always({
  kind: {
    type: 'string',
    enum: ['http', 'kafka', 'amqp', 'nats', 'mqtt', 'redis', 'sqs'],
    description: "Where its New Plants go, from its URL's scheme",
  },
  hasCredentials: {
    type: 'boolean',
    description:
      'Whether a user and password, a client key or an OAuth 2 client secret are stored for it: sealed, never shown',
  },
  settings: ref('SubscriptionDestination'),
});
