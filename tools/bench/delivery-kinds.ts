// bench:delivery --kinds: which kinds to measure, each broker kind's runs (a destination of its own, its floor, a
// warm-up, the measured runs) and the table of kinds with what it says; also the client floor, HTTP's included.
import { fork } from 'node:child_process';
import path from 'node:path';
import type { BrokerKind } from '@app/delivery';
import { localBrokers } from '../harness/brokers';
import { startElasticMq } from '../harness/elasticmq';
import type { Receiver } from '../harness/receiver';
import { BrokerBases, createTarget, Kind, KINDS } from './destination-targets';
import { costPerDelivery, deliveryRun, measure, Measured, timed } from './delivery-runs';
import { histogramPercentiles, listArg, percentiles, Stack, step, table } from './harness';

/** --kinds: the measured runs once per destination kind; without it, HTTP alone and no table of kinds. */
export function kindsArg() {
  const given = process.argv.includes('--kinds');
  const kinds = listArg('kinds', 'http') as Kind[];
  const unknownKinds = kinds.filter((k) => !KINDS.includes(k));
  if (unknownKinds.length > 0) throw new Error(`--kinds: ${unknownKinds.join(', ')}: not one of ${KINDS.join(', ')}`);
  return { given, kinds, brokerKinds: kinds.filter((k): k is BrokerKind => k !== 'http') };
}

/**
 * The floor: a client library alone sending a delivery-sized request to `url`, in a process of its own. HTTP
 * (undici, node:http) to the receiver; a broker kind (--kinds) publishes to its destination.
 */
export function clientFloor(
  url: string,
  transport: 'undici' | 'node-http' | BrokerKind,
): Promise<{ usPerRequest: number; perSecond: number }> {
  const child = fork(path.join(__dirname, 'http-floor.ts'), {
    env: {
      ...process.env,
      FLOOR_URL: url,
      FLOOR_TRANSPORT: transport,
      FLOOR_BODY: JSON.stringify({ id: 6000000000000, name: 'Delivered', tag: 'bench' }),
      FLOOR_HEADERS: JSON.stringify({
        'content-type': 'application/json',
        'user-agent': 'PlantStore-Webhooks/1.0 (+https://plant.store)',
        'webhook-id': '8f9c4a9e-2b7c-5d1e-9a3f-0c6b8e2d4f10',
        'webhook-timestamp': '1795410540',
        'webhook-signature': 'v1,HtJ8quTZ+b71QHCvTkXcQ3kgBQk8NFM36przwZDFBvA=',
        'plant-store-hops': '1',
        'plant-store-origin': '8f9c4a9e-2b7c-5d1e-9a3f-0c6b8e2d4f10',
      }),
    },
    execArgv: ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => {
      resolve(m as { usPerRequest: number; perSecond: number });
      child.kill(); // measured: a client library's timer left behind must not keep it running
    });
    child.once('exit', (code) => code !== 0 && reject(new Error(`http-floor exited with ${code}`)));
  });
}

/** The table of kinds: a row per kind (and subscriber count), and each broker kind's floor for its footnote. */
export class KindTable {
  private readonly rows: Record<string, object> = {};
  readonly floors: Record<string, string> = {};

  constructor(private readonly rate: number) {}

  // A kind's row: latency to the ack the worker recorded (`acked`), CPU per delivery against the kind's floor.
  record(kind: Kind, subscribers: number, m: Measured, floorUs: number, acked: Map<number, number[]>) {
    const t = timed(m.accepted, acked);
    const c = costPerDelivery({ ...m, latencies: t.latencies });
    this.rows[`${kind}, ${subscribers} subscriber(s)`] = {
      deliveries: t.latencies.length,
      'offered/s': this.rate * subscribers,
      'delivered/s': t.deliveredPerSecond,
      ...(t.latencies.length > 0 ? percentiles(t.latencies, [50, 95]) : { p50: null, p95: null }),
      'worker µs': c?.worker ?? null,
      'postgresql µs': c?.postgresql ?? null,
      'floor µs': Number(floorUs.toFixed(1)),
      'x floor': c ? Number(((c.worker + c.postgresql) / floorUs).toFixed(1)) : null,
    };
  }

  print() {
    console.log(
      `\nPer destination kind at ${this.rate} webhooks/s: deliveries, latency (ms), CPU per successful delivery (µs) ` +
        `against that kind's floor:`,
    );
    table(this.rows);
    const floors = Object.entries(this.floors).map(([k, f]) => `${k} ${f}`);
    console.log(
      [
        "Latency, every row, http's too: from the gateway's 200 to the worker getting the destination's answer (a 2xx,",
        'Kafka acks=all, an AMQP confirm, a JetStream ack, an MQTT PUBACK, the XADD reply, the SQS answer for its entry of a SendMessageBatch) as the attempt log records',
        'it (the attempt start + its latency, to the ms), read from PostgreSQL after the CPU was metered. No consumer',
        "reads the brokers for it: it is when the worker knew the message taken, the answer's way back included, so",
        "http's row is a little later than the receiver's arrival in the first table. Delivered/s: those deliveries",
        "over the time from the first 200 to the last ack. Floor: one publish by the worker's own connection code for",
        'the kind (kafkajs, amqplib, nats, mqtt, ioredis, the AWS SDK), 20,000 at 64 in flight to the same destination, alone in a',
        `process, in this run: ${floors.join(', ') || 'none'}; http's is the undici floor. A kind's subscribers all`,
        "publish to one destination over one pooled connection; Kafka's topic is on the bench's own Kafka (the kafka",
        'column of the CPU table includes it). A broker run ends when the broker holds every message (MQTT: as a QoS 0',
        'subscriber in the bench counts them).',
      ].join('\n'),
    );
  }
}

/**
 * The local brokers that the broker kinds other than Kafka need (Kafka's topics are on the bench's own), ElasticMQ
 * for sqs, or null.
 */
export async function localBrokersFor(kinds: BrokerKind[]): Promise<BrokerBases | null> {
  const local = kinds.filter((k): k is Exclude<BrokerKind, 'kafka' | 'sqs'> => k !== 'kafka' && k !== 'sqs');
  if (local.length === 0 && !kinds.includes('sqs')) return null;
  const brokers = local.length > 0 ? await localBrokers(local) : null;
  const elasticMq = kinds.includes('sqs')
    ? await startElasticMq().catch(async (err) => {
        await brokers?.stop();
        throw err;
      })
    : null;
  const bases: BrokerBases = {
    ...(brokers ? Object.fromEntries(local.map((k) => [k, brokers[k]])) : {}),
    ...(elasticMq ? { sqs: elasticMq.endpoint } : {}),
    stop: async () => {
      await Promise.all([brokers?.stop(), elasticMq?.stop()]);
    },
  };
  return bases;
}

/** What each broker kind's runs share with HTTP's: the stack, the load, the worker's histograms, the tables. */
export interface KindRuns {
  stack: Stack;
  rx: Receiver;
  brokers: BrokerBases | null;
  rate: number;
  seconds: number;
  subscriberCounts: number[];
  nextId: () => number;
  histograms: () => Promise<Map<number, number>[]>;
  /** Where the time went, where the cores went: a row per run. */
  split: Record<string, object>;
  cpu: Record<string, object>;
  byKind: KindTable;
}

/** Each broker kind: a destination of its own, its floor, a warm-up, then the same runs as HTTP's. */
export async function brokerKindRuns(kinds: BrokerKind[], o: KindRuns) {
  const { stack, rx, rate, seconds, nextId, histograms, split, cpu, byKind } = o;
  for (const kind of kinds) {
    let s = step(`${kind}: a destination of its own, the floor (20,000 direct publishes), a warm-up of ${rate * 3}`);
    const target = await createTarget(kind, stack.env, o.brokers);
    try {
      const f = await clientFloor(target.url, kind);
      byKind.floors[kind] = `${f.usPerRequest.toFixed(1)} µs (${f.perSecond}/s)`;
      const warmUp = { subscribers: 1, rate, count: rate * 3, nextId, path: 'warm-up', waitMs: 60000, target };
      await deliveryRun(stack, rx, warmUp);
      s.done(`${target.url.replace(/\/\/[^@/]*@/, '//')}; floor ${byKind.floors[kind]} of CPU per publish`);
      for (const subscribers of o.subscriberCounts) {
        const count = rate * seconds;
        s = step(`${kind}, ${subscribers} subscriber(s): ${count} webhooks at ${rate}/s`);
        const before = await histograms();
        const m = await measure(stack, rx, { subscribers, rate, count, nextId, target });
        s.done(`${m.latencies.length}/${count * subscribers} acked`);
        const after = await histograms();
        const label = `${kind}, ${subscribers} subscriber(s)`;
        split[`${label}: gateway event -> plant and deliveries stored`] = histogramPercentiles(before[0], after[0]);
        split[`${label}: gateway event -> ack recorded`] = histogramPercentiles(before[1], after[1]);
        if (m.cores) cpu[label] = m.cores;
        byKind.record(kind, subscribers, m, f.usPerRequest, m.times); // a broker's times are the acks already
      }
    } finally {
      await target.teardown();
    }
  }
}
