import { KafkaConfig, logLevel, Partitioners, ProducerConfig } from 'kafkajs';
import { kafkaLogCreator } from './kafka-logs';

/** kafkajs client settings shared by both apps. Brokers always come from KAFKA_BROKERS (never `localhost`). */
export function kafkaClientConfig(brokers: string[], clientId: string): KafkaConfig {
  const logCreator = kafkaLogCreator();
  return {
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
    ...(logCreator ? { logCreator } : {}), // absent, not undefined: Nest's transport would lose its own
  };
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
 * idempotency key and the worker applies an event id once.
 */
export const durableProducerConfig: ProducerConfig = {
  idempotent: false,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: Partitioners.DefaultPartitioner,
  retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2000 },
};
