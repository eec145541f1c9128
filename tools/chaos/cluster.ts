// What the three-broker scenarios need to know about the cluster before they break it: which node leads the
// busiest plant.created partition, which nodes follow it, which node is the active controller, and whether
// every replica is back in sync.
import fs from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaNode } from './stack';

export const TOPIC = 'plant.created';

export interface PartitionState {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  /** Records it has ever had (its high watermark). */
  size: number;
}

async function withAdmin<T>(brokers: string[], work: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  // No retries: a question asked during a fault should fail fast and be asked again, not hang.
  const admin = new Kafka({
    brokers,
    clientId: 'chaos-cluster',
    logLevel: logLevel.NOTHING,
    requestTimeout: 5000,
    retry: { retries: 1 },
  }).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Every plant.created partition as the brokers in `brokers` see it (ask the live ones during a fault). */
export function partitions(brokers: string[]): Promise<PartitionState[]> {
  return withAdmin(brokers, async (admin) => {
    const offsets = new Map((await admin.fetchTopicOffsets(TOPIC)).map((o) => [o.partition, Number(o.high)]));
    const md = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    return md.topics[0].partitions.map((p) => ({
      partition: p.partitionId,
      leader: p.leader,
      replicas: p.replicas,
      isr: p.isr,
      size: offsets.get(p.partitionId) ?? 0,
    }));
  });
}

/** Who is in sync for each plant.created partition, from metadata alone (no request to a paused leader). */
export function inSyncReplicas(brokers: string[]): Promise<Map<number, number[]>> {
  return withAdmin(brokers, async (admin) => {
    const md = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    return new Map(md.topics[0].partitions.map((p) => [p.partitionId, p.isr]));
  });
}

/** The plant.created partition with the most records so far: the one a fault hurts most. */
export async function busiestPartition(brokers: string[]): Promise<PartitionState> {
  return (await partitions(brokers)).reduce((a, b) => (b.size > a.size ? b : a));
}

/**
 * The node that is the active KRaft controller now. Clients cannot ask (a KRaft broker answers Metadata with a
 * random broker as "controller"), so it is read from the nodes' own logs: the highest epoch at which a node
 * logged "Becoming the active controller".
 */
export function activeController(nodes: KafkaNode[]): { node: KafkaNode; epoch: number } | undefined {
  let best: { node: KafkaNode; epoch: number } | undefined;
  for (const node of nodes) {
    const text = fs.existsSync(node.logFile) ? fs.readFileSync(node.logFile, 'utf8') : '';
    for (const m of text.matchAll(/Becoming the active controller at epoch (\d+)/g)) {
      const epoch = Number(m[1]);
      if (!best || epoch > best.epoch) best = { node, epoch };
    }
  }
  return best;
}

/** The address of each node that is running: the ones to ask during a fault. */
export function liveBrokers(nodes: KafkaNode[], brokers: string[]): string[] {
  return nodes.filter((n) => n.running).map((n) => brokers[nodes.indexOf(n)]);
}

/** Waits until every plant.created partition has all its replicas in sync again (a rolling restart's step). */
export async function waitInSync(brokers: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ps = await partitions(brokers).catch(() => []);
    if (ps.length > 0 && ps.every((p) => p.isr.length === p.replicas.length)) return;
    if (Date.now() > deadline) throw new Error(`plant.created replicas not back in sync after ${timeoutMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The node that coordinates `groupId`: the leader of its __consumer_offsets partition, which Kafka picks as
 * abs(Java's String.hashCode(groupId)) % the topic's partition count (GroupCoordinator.partitionFor). Killing it
 * moves the group's coordinator: what left kafkajs 2.2.4 consumers silent for good (issue #33).
 */
export function groupCoordinator(brokers: string[], groupId: string): Promise<number> {
  return withAdmin(brokers, async (admin) => {
    const md = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets'] });
    const partitions = md.topics[0].partitions;
    const wanted = javaAbs(javaHashCode(groupId)) % partitions.length;
    const p = partitions.find((x) => x.partitionId === wanted);
    if (!p || p.leader < 0) throw new Error(`__consumer_offsets-${wanted} has no leader`);
    return p.leader;
  });
}

function javaHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

const javaAbs = (n: number) => (n === -2147483648 ? 0 : Math.abs(n));
