import { Admin, Kafka } from 'kafkajs';
import { kafkaClientConfig } from './kafka-options';
import { ensureTopics, missingTopics, TopicSettings } from './topics';

/** Runs `work` with a short-lived admin client, disconnected afterwards whatever happens. */
async function withAdmin<T>(brokers: string[], work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka(kafkaClientConfig(brokers, 'plant-store-admin')).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

/** Creates missing topics. The worker calls it at start-up (it owns the topics). */
export function ensureTopicsOn(brokers: string[], settings: TopicSettings): Promise<string[]> {
  return withAdmin(brokers, (admin) => ensureTopics(admin, settings));
}

/** The names of the topics Plant Store needs that the broker does not have yet (the gateway checks, never creates). */
export function missingTopicsOn(brokers: string[], settings: TopicSettings): Promise<string[]> {
  return withAdmin(brokers, async (admin) => (await missingTopics(admin, settings)).map((t) => t.topic));
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
