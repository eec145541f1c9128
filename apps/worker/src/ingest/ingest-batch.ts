import { IHeaders, KafkaMessage, Producer } from 'kafkajs';

/**
 * One fetched batch of a partition, as the worker's handler sees it. Nest's Kafka transport hands handlers
 * one message at a time; IngestServer hands them this instead, so a batch is stored in one statement and
 * committed once, after it is stored.
 */
export interface IngestBatch {
  topic: string;
  partition: number;
  messages: KafkaMessage[];
  /** Keeps the group membership alive during long work (database outage, big batch). */
  heartbeat(): Promise<void>;
  /** False once the consumer is stopping or the partition was revoked: stop, commit nothing. */
  shouldContinue(): boolean;
  /** Marks everything up to `lastOffset` stored: committed (as lastOffset + 1) within a second, or at once when stopping. */
  commit(lastOffset: string): Promise<void>;
  producer: Producer;
  /** Where this worker writes dead letters (KAFKA_TOPIC_PLANT_CREATED_DLQ or the prefixed default). */
  deadLetterTopic: string;
}

export function headerString(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  if (v === undefined) return undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : first.toString();
}
