import { Admin, ITopicConfig } from 'kafkajs';
import { PLANT_CREATED_DLQ_TOPIC, PLANT_CREATED_TOPIC } from '@app/contracts';

export interface TopicSettings {
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
}

/** The topics Plant Store uses, created explicitly: kafkajs cannot subscribe to a topic that does not exist. */
export function topicSpecs(s: TopicSettings): ITopicConfig[] {
  const configEntries = [{ name: 'min.insync.replicas', value: String(s.minInsyncReplicas) }];
  return [
    { topic: PLANT_CREATED_TOPIC, numPartitions: s.partitions, replicationFactor: s.replicationFactor, configEntries },
    // Dead letters are rare and replayed by hand: a few partitions are plenty.
    {
      topic: PLANT_CREATED_DLQ_TOPIC,
      numPartitions: Math.min(s.partitions, 3),
      replicationFactor: s.replicationFactor,
      configEntries,
    },
  ];
}

/** The topics of `topicSpecs(s)` the broker does not have yet. */
export async function missingTopics(admin: Admin, s: TopicSettings): Promise<ITopicConfig[]> {
  const existing = new Set(await admin.listTopics());
  return topicSpecs(s).filter((t) => !existing.has(t.topic));
}

/** Idempotent: topics that already exist are left as they are. Returns the names it created. */
export async function ensureTopics(admin: Admin, s: TopicSettings): Promise<string[]> {
  const missing = await missingTopics(admin, s);
  if (missing.length === 0) return [];
  try {
    await admin.createTopics({ topics: missing, waitForLeaders: true });
  } catch (err) {
    // Another replica may have created them between our list and create.
    if (!/already exists/i.test(String((err as Error).message))) throw err;
  }
  return missing.map((t) => t.topic);
}
