// What a Kafka broker answered, as a sentence a subscriber's operator can act on. kafkajs wraps the broker's
// error in its retrier's (NumberOfRetriesExceeded, NonRetriable): the sentence is about the innermost one.

interface KafkaLikeError {
  name?: string;
  message?: string;
  type?: string;
  code?: string;
  broker?: string;
  host?: string;
  port?: number;
  cause?: unknown;
}

const WRAPPERS = ['KafkaJSNumberOfRetriesExceeded', 'KafkaJSNonRetriableError'];

/** The broker's own error under kafkajs's retry wrappers. */
function innermost(err: unknown): KafkaLikeError {
  let e = (err ?? {}) as KafkaLikeError;
  for (let depth = 0; depth < 5 && WRAPPERS.includes(e.name ?? '') && e.cause && e.cause !== e; depth++)
    e = e.cause as KafkaLikeError;
  return e;
}

/** Protocol error types (kafkajs's `type`), by what they mean for a producer to one topic. */
const BY_TYPE: Record<string, (topic: string) => string> = {
  UNKNOWN_TOPIC_OR_PARTITION: (t) => `topic "${t}" does not exist on the cluster`,
  INVALID_TOPIC_EXCEPTION: (t) => `"${t}" is not a valid topic name for the cluster`,
  TOPIC_AUTHORIZATION_FAILED: (t) => `the user may not write to topic "${t}"`,
  CLUSTER_AUTHORIZATION_FAILED: () => 'the user may not produce to this cluster',
  SASL_AUTHENTICATION_FAILED: () => 'the broker refused the user name or password',
  ILLEGAL_SASL_STATE: () => 'the listener does not take SASL (a user in the URL needs a SASL listener)',
  UNSUPPORTED_SASL_MECHANISM: () => 'the broker does not accept this SASL mechanism (settings.sasl.mechanism)',
  LEADER_NOT_AVAILABLE: (t) => `topic "${t}" has no leader yet (being created or electing one)`,
  NOT_LEADER_FOR_PARTITION: () => 'the broker is no longer the leader of the partition',
  NOT_LEADER_OR_FOLLOWER: () => 'the broker is no longer the leader of the partition',
  NOT_ENOUGH_REPLICAS: (t) => `topic "${t}" has too few in-sync replicas to take the message with acks=all`,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: (t) => `topic "${t}" lost in-sync replicas while taking the message`,
  REQUEST_TIMED_OUT: () => 'the replicas did not acknowledge the message in time',
  MESSAGE_TOO_LARGE: (t) => `the message is larger than topic "${t}" accepts (max.message.bytes)`,
  RECORD_LIST_TOO_LARGE: (t) => `the message is larger than topic "${t}" accepts (max.message.bytes)`,
  POLICY_VIOLATION: (t) => `topic "${t}" refused the message by policy`,
};

/**
 * `kafka: <sentence> (<TYPE or code>)` for an error of kafkajs while producing to `topic`. A type not known
 * here keeps the broker's own message, so nothing it said is lost.
 */
export function kafkaErrorSentence(err: unknown, topic: string): string {
  const e = innermost(err);
  const message = e.message ?? String(err);
  if (e.type) {
    const known = BY_TYPE[e.type];
    return `kafka: ${known ? known(topic) : `the broker answered: ${message}`} (${e.type})`;
  }
  switch (e.name) {
    case 'KafkaJSConnectionClosedError':
      return `kafka: broker ${e.host}:${e.port} closed the connection`;
    case 'KafkaJSConnectionError': {
      // kafkajs prefixes the socket's error ("Connection error: connect ECONNREFUSED …"); the guard's refusal
      // of a private address arrives the same way, with its code (ESSRFBLOCKED).
      const why = message.replace(/^(Connection error|Failed to connect): /, '');
      return `kafka: could not reach broker ${e.broker ?? 'of the cluster'}: ${why}${e.code ? ` (${e.code})` : ''}`;
    }
    case 'KafkaJSRequestTimeoutError':
      return `kafka: ${e.broker ? `broker ${e.broker}` : 'the broker'} did not answer in time (${message})`;
    case 'KafkaJSSASLAuthenticationError':
      return /OAUTHBEARER/.test(message)
        ? `kafka: the broker refused the OAuth token (${message})`
        : `kafka: the broker refused the user name or password (${message})`;
    case 'KafkaJSBrokerNotFound':
    case 'KafkaJSMetadataNotLoaded':
    case 'KafkaJSTopicMetadataNotLoaded':
      return `kafka: no broker of the cluster answered for topic "${topic}" (${message})`;
    default:
      return `kafka: ${message}`;
  }
}

/** Errors after which this connection's sockets are gone: the pool should open another (after a backoff). */
export function isConnectionLoss(err: unknown): boolean {
  const name = innermost(err).name ?? '';
  return ['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError'].includes(name);
}

/** The broker refused the SASL credentials or token (not a lost connection): an OAuth token is then forgotten. */
export const isAuthenticationRefused = (err: unknown): boolean =>
  innermost(err).name === 'KafkaJSSASLAuthenticationError';
