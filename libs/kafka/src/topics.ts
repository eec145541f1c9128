import { Admin, ITopicConfig } from 'kafkajs';
import type { KafkaEnv } from '@app/config';
import { PLANT_CREATED_DLQ_TOPIC, PLANT_CREATED_TOPIC } from '@app/contracts';

/** The topics' names: the defaults behind KAFKA_TOPIC_PREFIX, or each set by name (a platform team's). */
export interface TopicNames {
  plantCreated: string;
  deadLetters: string;
}

export function topicNamesFrom(c: KafkaEnv): TopicNames {
  return {
    plantCreated: c.KAFKA_TOPIC_PLANT_CREATED ?? `${c.KAFKA_TOPIC_PREFIX}${PLANT_CREATED_TOPIC}`,
    deadLetters: c.KAFKA_TOPIC_PLANT_CREATED_DLQ ?? `${c.KAFKA_TOPIC_PREFIX}${PLANT_CREATED_DLQ_TOPIC}`,
  };
}

export interface TopicSettings {
  names: TopicNames;
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
}

export function topicSettingsFrom(c: KafkaEnv): TopicSettings {
  return {
    names: topicNamesFrom(c),
    partitions: c.PLANT_CREATED_PARTITIONS,
    replicationFactor: c.KAFKA_REPLICATION_FACTOR,
    minInsyncReplicas: c.KAFKA_MIN_INSYNC_REPLICAS,
  };
}

/** The topics Plant Store uses, created explicitly: kafkajs cannot subscribe to a topic that does not exist. */
export function topicSpecs(s: TopicSettings): ITopicConfig[] {
  const configEntries = [{ name: 'min.insync.replicas', value: String(s.minInsyncReplicas) }];
  return [
    { topic: s.names.plantCreated, numPartitions: s.partitions, replicationFactor: s.replicationFactor, configEntries },
    // Dead letters are rare and replayed by hand: a few partitions are plenty.
    {
      topic: s.names.deadLetters,
      numPartitions: deadLetterPartitions(s),
      replicationFactor: s.replicationFactor,
      configEntries,
    },
  ];
}

const deadLetterPartitions = (s: TopicSettings) => Math.min(s.partitions, 3);

/**
 * How existing topics differ from what Plant Store expects, one sentence per difference: the partitions of
 * plant.created (the worker's concurrency and per-plant order are planned on them), at least the replication
 * factor and min.insync.replicas configured. Reads topic metadata and configs (DESCRIBE_CONFIGS on the topics).
 */
export async function topicDifferences(admin: Admin, s: TopicSettings): Promise<string[]> {
  const specs = topicSpecs(s);
  const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((t) => t.topic) });
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: specs.map((t) => ({ type: 2 /* TOPIC */, name: t.topic, configNames: ['min.insync.replicas'] })),
  });
  const problems: string[] = [];
  for (const spec of specs) {
    const meta = topics.find((t) => t.name === spec.topic);
    if (!meta) continue;
    const partitions = meta.partitions.length;
    const replicas = Math.min(...meta.partitions.map((p) => p.replicas.length));
    const isr = Number(
      resources
        .find((r) => r.resourceName === spec.topic)
        ?.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue ?? 1,
    );
    const exact = spec.topic === s.names.plantCreated;
    if (exact ? partitions !== spec.numPartitions : partitions < 1)
      problems.push(
        `topic ${spec.topic} has ${partitions} partitions, PLANT_CREATED_PARTITIONS expects ${spec.numPartitions}`,
      );
    if (replicas < s.replicationFactor)
      problems.push(
        `topic ${spec.topic} has replication factor ${replicas}, KAFKA_REPLICATION_FACTOR expects at least ${s.replicationFactor}`,
      );
    if (isr < s.minInsyncReplicas)
      problems.push(
        `topic ${spec.topic} has min.insync.replicas=${isr}, KAFKA_MIN_INSYNC_REPLICAS expects at least ${s.minInsyncReplicas}`,
      );
  }
  return problems;
}

/**
 * admin.createTopics for one topic, waiting for its leaders. On a KRaft cluster the broker kafkajs asks for the
 * leaders may not have the new topic in its metadata yet: it answers UNKNOWN_TOPIC_OR_PARTITION and kafkajs gives
 * up instead of asking again (the worker exited at start-up on a fresh three-node cluster). Ask until the
 * cluster has it. Resolves as createTopics does: true when this call created it.
 */
export async function createTopicWithLeaders(admin: Admin, topic: ITopicConfig): Promise<boolean> {
  try {
    return await admin.createTopics({ topics: [topic], waitForLeaders: true });
  } catch (err) {
    if ((err as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw err;
    await waitForLeaders(admin, [topic.topic]);
    return true;
  }
}

/** Resolves once every partition of `topics` has a leader; bounded, so that a start-up never hangs on it. */
export async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const md = await admin.fetchTopicMetadata({ topics });
      if (md.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`topics ${topics.join(', ')} have no leaders after ${timeoutMs / 1000}s: ${String(last ?? '')}`);
}
