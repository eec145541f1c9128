import { IHeaders, Message } from 'kafkajs';
import { DeadLetterHeaders, PLANT_CREATED_DLQ_TOPIC } from '@app/contracts';
import { PlantBatch } from './plant-batch';
import { PoisonMessage } from './batch-plan';

/** The original bytes, key and headers, plus why and where from, so the record can be inspected and replayed. */
export function toDeadLetter(topic: string, partition: number, p: PoisonMessage): Message {
  const headers: IHeaders = {
    ...(p.message.headers ?? {}),
    [DeadLetterHeaders.reason]: p.reason.slice(0, 1000),
    [DeadLetterHeaders.topic]: topic,
    [DeadLetterHeaders.partition]: String(partition),
    [DeadLetterHeaders.offset]: p.message.offset,
  };
  return { key: p.message.key, value: p.message.value, headers };
}

/** Awaited with acks=all before the batch commits: a dead letter is never lost between topics. */
export async function publishDeadLetters(batch: PlantBatch, poison: PoisonMessage[]): Promise<void> {
  if (poison.length === 0) return;
  await batch.producer.send({
    topic: PLANT_CREATED_DLQ_TOPIC,
    acks: -1,
    messages: poison.map((p) => toDeadLetter(batch.topic, batch.partition, p)),
  });
}
