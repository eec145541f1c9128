import { Admin, ITopicConfig, Kafka } from 'kafkajs';
import type { KafkaEnv } from '@app/config';
import { AclNeed, explainKafkaError, KafkaAccessError } from './kafka-errors';
import { kafkaClientConfig } from './kafka-options';
import { createTopicWithLeaders, TopicSettings, topicSettingsFrom, topicSpecs, topicDifferences } from './topics';

/** Runs `work` with a short-lived admin client, disconnected afterwards whatever happens. */
async function withAdmin<T>(c: KafkaEnv, work: (admin: Admin, once: Admin) => Promise<T>): Promise<T> {
  const kafka = new Kafka(kafkaClientConfig(c, 'plant-store-admin'));
  const admin = kafka.admin();
  // Unretried, for the questions whose "no" is an answer (a topic missing, a denial), not a failure to wait out.
  const once = kafka.admin({ retry: { retries: 0 } });
  await admin.connect();
  await once.connect();
  try {
    return await work(admin, once);
  } finally {
    await Promise.all([admin.disconnect(), once.disconnect()]);
  }
}

type Access = 'present' | 'missing' | 'denied';

/**
 * Whether the topic exists, from this principal's point of view. A metadata request for it by name tells the
 * three cases apart (listTopics would silently leave out a topic the principal may not describe).
 */
async function topicAccess(once: Admin, topic: string): Promise<Access> {
  try {
    await once.fetchTopicMetadata({ topics: [topic] });
    return 'present';
  } catch (err) {
    const type = errorType(err);
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION') return 'missing';
    if (type === 'TOPIC_AUTHORIZATION_FAILED') return 'denied';
    throw err;
  }
}

/** What the worker needs of each topic: the ACL a denial is reported as (docs/kafka-security.md). */
const workerNeeds = (s: TopicSettings): Record<string, AclNeed> => ({
  [s.names.plantCreated]: { operation: 'READ', resource: 'TOPIC', name: s.names.plantCreated },
  [s.names.deadLetters]: { operation: 'READ', resource: 'TOPIC', name: s.names.deadLetters },
});

/**
 * The worker's set-up: with KAFKA_CREATE_TOPICS (the default) it creates the topics that are missing; without,
 * it checks that a platform team created them as expected and says exactly what is missing or different.
 * Either way, a topic or group it may not use stops it here, naming the ACL. Returns the names it created.
 */
export function prepareTopics(c: KafkaEnv, groups: string[]): Promise<string[]> {
  const s = topicSettingsFrom(c);
  return withAdmin(c, async (admin, once) => {
    const needs = workerNeeds(s);
    const specs = topicSpecs(s);
    const access = await Promise.all(specs.map((t) => topicAccess(once, t.topic)));
    const denied = specs.filter((_, i) => access[i] === 'denied');
    if (denied.length > 0) throw explainKafkaError(authorizationError('TOPIC'), c, needs[denied[0].topic]);
    const missing = specs.filter((_, i) => access[i] === 'missing');
    let created: string[] = [];
    if (missing.length > 0 && !c.KAFKA_CREATE_TOPICS) throw new KafkaAccessError(missingMessage(missing, s));
    if (missing.length > 0) created = await createTopics(admin, c, missing);
    if (!c.KAFKA_CREATE_TOPICS) {
      const problems = await topicDifferences(admin, s).catch((err) => {
        throw explainKafkaError(err, c, { operation: 'DESCRIBE_CONFIGS', resource: 'TOPIC', name: specs[0].topic });
      });
      if (problems.length > 0)
        throw new KafkaAccessError(`Kafka topics are not as Plant Store expects: ${problems.join('; ')}`);
    }
    await checkGroups(admin, c, groups, s.names.plantCreated, 'READ');
    return created;
  });
}

function missingMessage(missing: ITopicConfig[], s: TopicSettings): string {
  const list = missing.map(
    (t) =>
      `${t.topic} (${t.numPartitions} partitions, replication factor ≥ ${t.replicationFactor}, min.insync.replicas ≥ ${s.minInsyncReplicas})`,
  );
  return (
    `Kafka topics missing with KAFKA_CREATE_TOPICS=false: ${list.join(', ')}. Ask for them to be created, ` +
    'or set KAFKA_TOPIC_PREFIX / KAFKA_TOPIC_PLANT_CREATED / KAFKA_TOPIC_PLANT_CREATED_DLQ to the names that exist'
  );
}

async function createTopics(admin: Admin, c: KafkaEnv, missing: ITopicConfig[]): Promise<string[]> {
  const created: string[] = [];
  // One at a time, so that a denial names the topic it was about (CREATE may be granted per topic name).
  for (const topic of missing) {
    try {
      if (await createTopicWithLeaders(admin, topic)) created.push(topic.topic);
    } catch (err) {
      // Another replica may have created it between our check and create.
      if (/already exists/i.test(String((err as Error).message))) continue;
      throw explainKafkaError(err, c, { operation: 'CREATE', resource: 'TOPIC', name: topic.topic });
    }
  }
  return created;
}

/**
 * A group the principal may not use: its committed offsets cannot be read (DESCRIBE, implied by READ). On a fresh
 * cluster the group's coordinator may not be there yet (the offsets topic is still being created and its leaders
 * elected): that is waited out, for a bounded time, rather than taken for a failure.
 */
export async function checkGroups(
  admin: Admin,
  c: KafkaEnv,
  groups: string[],
  topic: string,
  operation: 'READ' | 'DESCRIBE',
) {
  for (const groupId of groups) {
    const deadline = Date.now() + COORDINATOR_WAIT_MS;
    for (;;) {
      const failure = await admin.fetchOffsets({ groupId, topics: [topic] }).then(
        () => null,
        (err: unknown) => err,
      );
      if (failure === null) break;
      if (!COORDINATOR_MOVING.has(errorType(failure) ?? '') || Date.now() > deadline)
        throw explainKafkaError(failure, c, { operation, resource: 'GROUP', name: groupId });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Kafka's answers while a group's coordinator is loading, moving or not elected yet: retriable, not a denial. */
const COORDINATOR_MOVING = new Set([
  'GROUP_LOAD_IN_PROGRESS',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR_FOR_GROUP',
]);
const COORDINATOR_WAIT_MS = 30_000;

/** The Kafka error code of a failure, also when a retry wrapper holds it as its cause. */
function errorType(err: unknown): string | undefined {
  for (let e = err as { type?: string; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++)
    if (e.type) return e.type;
  return undefined;
}

const authorizationError = (resource: string) =>
  Object.assign(new Error(`${resource}_AUTHORIZATION_FAILED`), { type: `${resource}_AUTHORIZATION_FAILED` });

/**
 * The gateway's check (it never creates): the names of its topics that do not exist yet, so it can wait for
 * the worker. A denial is not waited out: it throws, naming the ACL (WRITE on the topic, which implies the
 * DESCRIBE asked here; DESCRIBE on the worker's group, for the overview's lag).
 */
export function missingGatewayTopics(c: KafkaEnv, lagGroup: string): Promise<string[]> {
  const s = topicSettingsFrom(c);
  const topic = s.names.plantCreated;
  return withAdmin(c, async (admin, once) => {
    const access = await topicAccess(once, topic);
    if (access === 'denied')
      throw explainKafkaError(authorizationError('TOPIC'), c, { operation: 'WRITE', resource: 'TOPIC', name: topic });
    if (access === 'missing') return [topic];
    await checkGroups(admin, c, [lagGroup], topic, 'DESCRIBE');
    return [];
  });
}
