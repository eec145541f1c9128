import { Message } from 'kafkajs';

/** The port the webhook service publishes through; the Kafka adapter lives in ./kafka-event-publisher.ts. */
export interface EventPublisher {
  /** Resolves only once Kafka has acknowledged the record (acks=all). */
  publish(topic: string, message: Message, timeoutMs: number): Promise<void>;
  /** Why webhooks cannot be taken now (not connected, refused by Kafka), or null when they can. */
  notReady(): string | null;
}

export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');
