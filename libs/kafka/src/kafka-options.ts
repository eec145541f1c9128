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
 * acks=all (kafkajs sends acks -1 by default; we pass it explicitly on every send) and idempotent, so a retried
 * produce never duplicates a record. One request in flight keeps the idempotent sequence simple and lets the
 * publisher coalesce everything that arrives meanwhile into the next batch.
 */
export const durableProducerConfig: ProducerConfig = {
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: Partitioners.DefaultPartitioner,
  // An idempotent producer retries without limit (kafkajs warns otherwise); callers bound the wait instead.
  retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2000 },
};
