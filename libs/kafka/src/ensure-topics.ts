import { Kafka } from 'kafkajs';
import { kafkaClientConfig } from './kafka-options';
import { ensureTopics, TopicSettings } from './topics';

/** Connects a short-lived admin client, creates missing topics, disconnects. Both apps call it at start-up. */
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
