import { KafkaMessage } from 'kafkajs';
import { parsePlantCreatedEvent } from '@app/contracts';
import { EventHeaders, plantDigest } from '@app/contracts';
import { IngestEvent } from '@app/delivery';
import { headerString } from './ingest-batch';

export interface PoisonMessage {
  message: KafkaMessage;
  reason: string;
}

export interface BatchPlan {
  events: IngestEvent[];
  poison: PoisonMessage[];
}

/** Splits a batch into events to store and records that can never be stored (bad JSON, bad event, bad plant). */
export function planBatch(topic: string, partition: number, messages: KafkaMessage[]): BatchPlan {
  const plan: BatchPlan = { events: [], poison: [] };
  for (const message of messages) {
    const parsed = parsePlantCreatedEvent(message.value);
    if (!parsed.ok) {
      plan.poison.push({ message, reason: parsed.reason });
      continue;
    }
    const { event } = parsed;
    const { id, name, tag, ...extra } = event.data;
    plan.events.push({
      eventId: event.id,
      plantId: id,
      name,
      tag: tag ?? null,
      extra,
      eventTime: event.time,
      topic,
      partition,
      offset: message.offset,
      hops: event.hopcount ?? 0,
      originEventId: event.originid ?? event.id,
      // The producer's; the ingest service replaces it with its own span's once that exists.
      traceparent: headerString(message.headers, EventHeaders.traceparent) ?? null,
      digest: plantDigest(event.data),
    });
  }
  return plan;
}
