import { Kafka } from 'kafkajs';
import { kafkaClientConfig } from './kafka-options';
import { ensureTopics, TopicSettings, topicSpecs } from './topics';

/** Connects a short-lived admin client, creates missing topics, disconnects. The worker calls it at start-up (it owns the topics). */
export async function ensureTopicsOn(brokers: string[], settings: TopicSettings): Promise<string[]> {
  const admin = new Kafka(kafkaClientConfig(brokers, 'plant-store-admin')).admin();
  await admin.connect();
  try {
    return await ensureTopics(admin, settings);
  } finally {
    await admin.disconnect();
  }
}

export function topicSettingsFrom(c: {
  PLANT_CREATED_PARTITIONS: number;
  KAFKA_REPLICATION_FACTOR: number;
  KAFKA_MIN_INSYNC_REPLICAS: number;
}): TopicSettings {
  return {
    partitions: c.PLANT_CREATED_PARTITIONS,
    replicationFactor: c.KAFKA_REPLICATION_FACTOR,
    minInsyncReplicas: c.KAFKA_MIN_INSYNC_REPLICAS,
  };
}

/** The topics Plant Store needs that the broker does not have yet (for the gateway, which checks but never creates). */
export async function missingTopicsOn(brokers: string[]): Promise<string[]> {
  const admin = new Kafka(kafkaClientConfig(brokers, 'plant-store-admin')).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    return topicSpecs({ partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 })
      .map((t) => t.topic)
      .filter((t) => !existing.has(t));
  } finally {
    await admin.disconnect();
  }
}
