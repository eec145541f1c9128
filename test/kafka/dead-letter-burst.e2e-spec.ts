// @alone: load that needs the machine to itself: a burst of 20,000 poison records that every later
// worker would re-read (tools/harness/sequencer.js runs it last).

import { Consumer, Producer } from 'kafkajs';
import { Pool } from 'pg';
import { newPlantCreatedEvent, PLANT_CREATED_DLQ_TOPIC, PLANT_CREATED_TOPIC } from '@app/contracts';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// The attack (issue #10, item 2): a misconfigured producer writes 20,000 raw JSON records to plant.created.
// The worker dead-lettered a whole fetched batch as one produce request, the broker refused it as
// MESSAGE_TOO_LARGE, and the worker retried it forever: partition stuck, even after a restart. Here the same
// burst (one key, so one partition), plus one record too large to copy with our headers, must all reach the
// DLQ, and a valid event behind them must be stored.
describe('a burst of poison on one partition', () => {
  let worker: e2e.RunningWorker;
  let producer: Producer;
  let reader: Consumer;
  let pool: Pool;
  const letters = new Map<string, { truncated: boolean; bytes: number; originalBytes?: string }>();
  const key = `raw-burst-${Date.now()}`;
  const nextId = e2e.plantIds();
  const env = e2e.baseEnv();

  beforeAll(async () => {
    await e2e.prepareTestInfrastructure();
    // From the topic's end: the burst and what is behind it, not every earlier suite's records first.
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    producer = e2e.testKafka().producer();
    await producer.connect();
    pool = e2e.testPool();
    reader = await e2e.startReader(PLANT_CREATED_DLQ_TOPIC, (m) => {
      if (m.key?.toString() !== key) return;
      letters.set(m.headers!['x-origin-offset']!.toString(), {
        truncated: m.headers!['x-truncated']?.toString() === 'true',
        bytes: m.value?.length ?? 0,
        originalBytes: m.headers!['x-original-bytes']?.toString(),
      });
    });
  });

  afterAll(async () => {
    await worker?.close();
    await reader?.disconnect();
    await producer?.disconnect();
    await pool?.end();
  });

  it('dead-letters every record in requests the broker accepts, and the partition moves on', async () => {
    const raw = (i: number) => JSON.stringify({ id: i, name: 'raw json, not a CloudEvent', padding: 'p'.repeat(200) });
    for (let start = 0; start < 20000; start += 2000) {
      const messages = Array.from({ length: 2000 }, (_, j) => ({
        key,
        value: raw(start + j),
        headers: { source: 'misconfigured-producer' },
      }));
      await producer.send({ topic: PLANT_CREATED_TOPIC, messages });
    }
    // Just under the broker's record limit (message.max.bytes, 1,048,588 by default, batch overhead included):
    // it fits plant.created, but not the DLQ once x-error and the x-origin headers are added.
    await producer.send({ topic: PLANT_CREATED_TOPIC, messages: [{ key, value: 'x'.repeat(1_048_400) }] });
    const id = nextId();
    await producer.send({
      topic: PLANT_CREATED_TOPIC,
      messages: [
        { key, value: JSON.stringify(newPlantCreatedEvent({ id, name: 'Behind the burst' }, { source: '/e2e' })) },
      ],
    });

    worker = await e2e.startWorker(env);
    await waitFor(
      'the valid event behind the burst stored',
      async () => (await pool.query('SELECT 1 FROM plants WHERE id = $1', [id])).rowCount === 1,
      120000,
      500,
    );
    await waitFor('all 20,001 dead letters', () => letters.size >= 20001, 30000, 250);
    const big = [...letters.values()].filter((l) => l.truncated);
    expect(big).toEqual([{ truncated: true, bytes: 16 * 1024, originalBytes: '1048400' }]);
    expect([...letters.values()].filter((l) => !l.truncated && l.bytes > 0)).toHaveLength(20000);
  }, 180000);
});
