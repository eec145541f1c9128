import { KafkaMessage } from 'kafkajs';
import { newPlantCreatedEvent, plantDigest } from '@app/contracts';
import { planBatch } from './batch-plan';

const message = (offset: number, value: string | null): KafkaMessage =>
  ({
    offset: String(offset),
    key: null,
    value: value === null ? null : Buffer.from(value),
    headers: {},
    timestamp: '0',
    attributes: 0,
  }) as KafkaMessage;

describe(planBatch.name, () => {
  it('keeps valid events as rows with their Kafka position and sets poison aside with a reason', () => {
    const event = newPlantCreatedEvent({ id: 7, name: 'Fern' }, { source: '/t' });
    const plan = planBatch('plant.created', 2, [
      message(10, JSON.stringify(event)),
      message(11, 'not json'),
      message(12, JSON.stringify({ ...event, data: { id: 2 ** 53, name: 'x' } })),
      message(13, null),
    ]);
    expect(plan.events).toEqual([
      {
        eventId: event.id,
        plantId: 7,
        name: 'Fern',
        tag: null,
        extra: {},
        eventTime: event.time,
        topic: 'plant.created',
        partition: 2,
        offset: '10',
        hops: 0,
        originEventId: event.id,
        traceparent: null,
        digest: plantDigest({ id: 7, name: 'Fern' }),
      },
    ]);
    expect(plan.poison.map((p) => [p.message.offset, p.reason])).toEqual([
      ['11', expect.stringMatching(/not JSON/)],
      ['12', expect.stringMatching(/data.id/)],
      ['13', 'empty value'],
    ]);
  });
});
