// Schemas of a subscription's destination beyond its URL (docs/destinations.md): what a broker URL cannot carry
// well. The URL's scheme selects the kind; its user and password, and a client key, are sealed and never shown.
import { always, ref } from './common';

export const DESTINATION_SCHEMES = 'http, https, kafka, amqp, amqps, nats, mqtt, mqtts, redis, rediss';

const pem = (what: string) => ({ type: 'string', maxLength: 16384, pattern: '-----BEGIN ', description: what });

export const SubscriptionDestination = {
  type: 'object',
  additionalProperties: false,
  description:
    "A broker destination's settings beside its URL (422 for an HTTP one, which takes none). The URL carries the " +
    'user and password (`amqp://user:pass@host/vhost?routingKey=q`): they are sealed at rest, never shown (a ' +
    'subscription shows `destination.hasCredentials`) and never logged. A change of `url` replaces the ' +
    'credentials with those the new URL carries, and `destination` with the one given (none when absent): they ' +
    'never stay behind for another address.',
  properties: {
    tls: {
      type: 'object',
      additionalProperties: false,
      description: 'TLS to the broker (on already for amqps, mqtts, rediss): a CA and a client certificate',
      properties: {
        ca: pem("The broker's CA (PEM) when it is not a public one"),
        cert: pem('A client certificate (PEM), for a broker that asks for one'),
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
      description: "kafka: the SASL mechanism the URL's user and password are sent with (plain when absent)",
      properties: { mechanism: { type: 'string', enum: ['plain', 'scram-sha-256', 'scram-sha-512'] } },
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
    enum: ['http', 'kafka', 'amqp', 'nats', 'mqtt', 'redis'],
    description: "Where its New Plants go, from its URL's scheme",
  },
  hasCredentials: {
    type: 'boolean',
    description: 'Whether a user and password (or a client key) are stored for the broker: sealed, never shown',
  },
  settings: ref('SubscriptionDestination'),
});
