#!/usr/bin/env node
// npm run bench:pipeline — the worker's end of the pipeline, on the real stack.
//  1. Latency: N webhooks at 1,000/s through the gateway; for each, the time from the gateway's 200 to its row
//     being stored (plants.created_at); p50/p99/p99.9. Baseline in the same run: the gateway's own
//     publish (200 after Kafka's ack), so the figure shows what the worker adds.
//  2. Throughput: a topic pre-filled with M events, drained by the worker; events stored per second.
//     Baseline in the same run: the same events applied one INSERT per event (what eachMessage does).
// Options: --rate 1000 --count 10000 --prefill 200000 --no-build
import { Kafka, Message } from 'kafkajs';
import { kafkaClientConfigFromEnv } from '@app/kafka';
import { Pool } from 'pg';
import { PLANT_CREATED_TOPIC } from '@app/contracts';
import { waitFor } from '../harness/wait';
import { arg, paced, percentiles, printPeakRss, runBench, sendWebhook, startStack, step, table } from './harness';

interface StoredRow {
  id: number;
  ms: number;
  event_ms: number;
}

async function main() {
  const rate = arg('rate', 1000);
  const count = arg('count', 10000);
  const prefill = arg('prefill', 200000);
  const stack = await startStack();
  const pool = new Pool({ connectionString: stack.env.DATABASE_URL, max: 4 });
  const countStored = async (from: number, to: number) =>
    Number((await pool.query('SELECT count(*) FROM plants WHERE id >= $1 AND id < $2', [from, to])).rows[0].count);
  try {
    // Warm-up: JIT, connections, first group assignment.
    await paced(500, 1000, (i) => sendWebhook(stack.url, { id: 1e12 + i, name: 'warm' }));

    let s = step(`Latency: ${count} webhooks at ${rate}/s through gateway and worker`);
    const base = 2e12;
    const accepted = new Array<number>(count);
    const ack = new Array<number>(count);
    const { seconds } = await paced(rate, count, async (i) => {
      const t0 = Date.now();
      const res = await sendWebhook(stack.url, { id: base + i, name: `Plant ${i}`, tag: 'bench' });
      accepted[i] = Date.now();
      ack[i] = accepted[i] - t0;
      return res.status;
    });
    s.done(`sent in ${seconds.toFixed(1)} s`);
    s = step('Waiting for every row');
    await waitFor('every row', async () => (await countStored(base, base + count)) === count, 120000, 250).catch(
      () => undefined,
    );
    const { rows: stored } = await pool.query<StoredRow>(
      `SELECT id, (extract(epoch from created_at) * 1000)::float8 AS ms, (extract(epoch from last_event_time) * 1000)::float8 AS event_ms
       FROM plants WHERE id >= $1 AND id < $2`,
      [base, base + count],
    );
    s.done(`${stored.length}/${count} stored`);
    // The worker often stores the row before the sender has even read its 200 (both follow Kafka's ack), so
    // "200 -> stored" is clamped at 0; "event time -> stored" starts when the gateway built the event.
    const latency = stored.map((r) => Math.max(0, r.ms - accepted[r.id - base]));
    const endToEnd = stored.map((r) => Math.max(0, r.ms - r.event_ms));

    s = step(`Throughput: stopping the worker, pre-filling ${PLANT_CREATED_TOPIC} with ${prefill} events`);
    await stack.stopWorker();
    const kafka = new Kafka(kafkaClientConfigFromEnv({ ...process.env, ...stack.env }, 'bench'));
    const producer = kafka.producer();
    await producer.connect();
    const runId = Date.now();
    const eventsBase = 3e12;
    for (let off = 0; off < prefill; off += 5000) {
      const messages: Message[] = [];
      for (let i = off; i < Math.min(prefill, off + 5000); i++) {
        const id = eventsBase + i;
        const event = {
          specversion: '1.0',
          id: `bench-${i}-${runId}`,
          type: 'plant.created',
          source: '/bench',
          time: new Date().toISOString(),
          datacontenttype: 'application/json',
          data: { id, name: `Plant ${i}`, tag: 'bench' },
        };
        messages.push({ key: String(id), value: JSON.stringify(event) });
      }
      await producer.send({ topic: PLANT_CREATED_TOPIC, messages });
    }
    await producer.disconnect();
    s.done();

    // The worker resumes from its committed offsets; measured from ready to the last row stored.
    s = step('Draining with the worker (batched: one statement per fetched batch)');
    await stack.startWorker();
    const t0 = Date.now();
    await waitFor(
      'the topic drained',
      async () => (await countStored(eventsBase, eventsBase + prefill)) >= prefill,
      300000,
      200,
    ).catch(() => undefined);
    const n = await countStored(eventsBase, eventsBase + prefill);
    const drainSeconds = (Date.now() - t0) / 1000;
    s.done(`${n} rows in ${drainSeconds.toFixed(1)} s`);

    const sample = Math.min(prefill, 20000);
    s = step(`Baseline: the same ${sample} events, one INSERT per event`);
    const client = await pool.connect();
    const b0 = Date.now();
    for (let i = 0; i < sample; i++) {
      const id = 4e12 + i;
      await client.query('BEGIN');
      await client.query(
        'INSERT INTO processed_events (event_id, plant_id, event_time, kafka_topic, kafka_partition, kafka_offset) VALUES ($1,$2,now(),$3,0,$4) ON CONFLICT DO NOTHING',
        [`baseline-${i}-${b0}`, id, 'x', i],
      );
      await client.query(
        'INSERT INTO plants (id, name, tag, last_event_id, last_event_time) VALUES ($1,$2,$3,$4,now()) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name',
        [id, `Plant ${i}`, 'bench', `baseline-${i}`],
      );
      await client.query('COMMIT');
    }
    client.release();
    const baselineSeconds = (Date.now() - b0) / 1000;
    s.done();

    console.log('\nAccept (gateway 200) to stored row, milliseconds:');
    table({
      'sender got 200 -> row stored': { n: latency.length, ...percentiles(latency) },
      'gateway built event -> row stored': { n: endToEnd.length, ...percentiles(endToEnd) },
      'baseline: request -> 200 (Kafka ack)': { n: ack.length, ...percentiles(ack) },
    });
    console.log(
      `Target: p99 <= 50 ms at 1,000/s. Measured at ${rate}/s (sent in ${seconds.toFixed(1)} s): ` +
        `p99 ${percentiles(latency).p99} ms from the 200, ${percentiles(endToEnd).p99} ms from the gateway's event time.\n`,
    );
    console.log('Events stored per second:');
    table({
      'worker, batched (pre-filled topic)': {
        events: n,
        seconds: drainSeconds,
        perSecond: Math.round(n / drainSeconds),
      },
      'baseline, one INSERT per event, no Kafka': {
        events: sample,
        seconds: baselineSeconds,
        perSecond: Math.round(sample / baselineSeconds),
      },
    });
    console.log('Target: >= 10,000 events/s stored.');
    printPeakRss(stack);
  } finally {
    await pool.end();
    await stack.stop();
  }
}

runBench(main);
