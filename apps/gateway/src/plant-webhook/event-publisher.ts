import { Message } from 'kafkajs';

/** The port the webhook service publishes through; the Kafka adapter lives in ./kafka-event-publisher.ts. */
export interface EventPublisher {
  /** Resolves only once Kafka has acknowledged the record (acks=all). */
  publish(topic: string, message: Message, timeoutMs: number): Promise<void>;
  isReady(): boolean;
}

export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');
