import { KafkaConfig, logLevel, ProducerConfig, SASLOptions } from 'kafkajs';
import { KeyPartitioner } from './key-partitioner';
import type { ConnectionOptions } from 'node:tls';
import { KafkaEnv, kafkaEnvSchema, loadConfig } from '@app/config';
import { kafkaLogCreator } from './kafka-logs';
import { oauthBearerProviderFor } from './oauth-bearer';

/**
 * kafkajs client settings shared by both apps, the set-up job, the tools and the tests: brokers, TLS and SASL
 * from the validated configuration (libs/config/src/kafka-env.ts). Brokers always come from KAFKA_BROKERS
 * (never `localhost`).
 */
export function kafkaClientConfig(c: KafkaEnv, clientId: string): KafkaConfig {
  const logCreator = kafkaLogCreator();
  const ssl = tlsOptions(c);
  const sasl = saslOptions(c);
  return {
    clientId,
    brokers: c.KAFKA_BROKERS,
    ...(ssl ? { ssl } : {}),
    ...(sasl ? { sasl } : {}),
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
    ...(logCreator ? { logCreator } : {}), // absent, not undefined: Nest's transport would lose its own
  };
}

/** For tools that only talk to Kafka (bench, chaos, tests): the same variables, validated the same way. */
export function kafkaClientConfigFromEnv(env: NodeJS.ProcessEnv, clientId: string): KafkaConfig {
  return { ...kafkaClientConfig(loadConfig(kafkaEnvSchema, env), clientId), logLevel: logLevel.NOTHING };
}

/**
 * `tls.connect` options: the CA replaces the system's when given (a private CA), the client certificate is
 * for mTLS. Certificate and host-name checks always stay on: there is deliberately no setting to turn them off.
 */
export function tlsOptions(c: KafkaEnv): ConnectionOptions | undefined {
  if (!c.KAFKA_SSL) return undefined;
  const passphrase = c.KAFKA_SSL_KEY_PASSWORD ?? c.KAFKA_SSL_KEY_PASSWORD_FILE;
  return {
    rejectUnauthorized: true,
    ...(c.KAFKA_SSL_CA_FILE ? { ca: [c.KAFKA_SSL_CA_FILE] } : {}),
    ...(c.KAFKA_SSL_CERT_FILE ? { cert: c.KAFKA_SSL_CERT_FILE, key: c.KAFKA_SSL_KEY_FILE } : {}),
    ...(passphrase ? { passphrase } : {}),
  };
}

function saslOptions(c: KafkaEnv): SASLOptions | undefined {
  const mechanism = c.KAFKA_SASL_MECHANISM;
  if (!mechanism) return undefined;
  if (mechanism === 'oauthbearer') return { mechanism, oauthBearerProvider: oauthBearerProviderFor(c) };
  const username = (c.KAFKA_SASL_USERNAME ?? c.KAFKA_SASL_USERNAME_FILE)!;
  const password = (c.KAFKA_SASL_PASSWORD ?? c.KAFKA_SASL_PASSWORD_FILE)!;
  return { mechanism, username, password };
}

/** The SASL user name, as the broker's ACLs see it (`User:<name>`), when there is one to show. */
export function saslUsername(c: KafkaEnv): string | undefined {
  return c.KAFKA_SASL_USERNAME ?? c.KAFKA_SASL_USERNAME_FILE;
}

/**
 * acks=all (kafkajs sends acks -1 by default; we pass it explicitly on every send), one request in flight (a
 * retry can never overtake the batch after it, so per-partition order holds), retried without limit (callers
 * bound the wait).
 *
 * Not idempotent, on purpose. The fault suite once saw gateways, after a broker SIGKILL and restart, answer 200
 * for records that never reached the topic (about 1 in 80, evenly spread, with 503s, for the rest of the
 * processes' lives). The likely mechanism is kafkajs's sequence bookkeeping: it rolls a partition's sequence
 * back when a produce request fails, though the broker may have appended it, and a later batch of the same size
 * reusing that range is taken by the broker for a duplicate and acknowledged unwritten. Without idempotence a
 * retry may write a record twice instead, and that is already harmless here: the event id is derived from the
 * idempotency key and the worker applies an event id once. (It also spares the IDEMPOTENT_WRITE cluster ACL.)
 */
export const durableProducerConfig: ProducerConfig = {
  idempotent: false,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: KeyPartitioner, // kafkajs's DefaultPartitioner, without a Long per step (key-partitioner.ts)
  retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2000 },
};

/**
 * The gateway's producer: durableProducerConfig with every wait bounded near PUBLISH_TIMEOUT_MS, since its
 * callers answer 503 by then anyway. The fault suite found that with the defaults (30 s request timeout,
 * retried without limit, metadata refreshed every 5 min) a SIGSTOPped broker stopped every webhook for as long
 * as it stayed frozen: kafkajs kept re-sending to the frozen node, which looked alive, and never learnt that the
 * controller had moved its partitions. Now an unanswered request fails after the request timeout, the retry
 * after it reloads the metadata (older than metadataMaxAge by then) and so finds the new leader, and a batch
 * gives up after a few attempts so its lane (BatchingPublisher) moves on.
 */
export function boundedProducerConfig(publishTimeoutMs: number): {
  client: Pick<KafkaConfig, 'requestTimeout'>;
  producer: ProducerConfig;
  ackTimeoutMs: number;
} {
  return {
    // Above the broker's acks=all wait, so a leader waiting on a frozen follower answers REQUEST_TIMED_OUT first.
    client: { requestTimeout: publishTimeoutMs + 1000 },
    producer: {
      ...durableProducerConfig,
      metadataMaxAge: publishTimeoutMs,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    },
    ackTimeoutMs: publishTimeoutMs,
  };
}
