import { PLANT_CREATED_TOPIC } from '@app/contracts';
import { workerConsumerGroup } from '@app/kafka';
import { prepareTestInfrastructure, testKafka } from './stack';

/**
 * Commits a new worker group's offsets at the end of plant.created, so that its worker reads only what is sent
 * from now on: a suite timing its own plants need not wait while the worker stores (and dead-letters) everything
 * earlier suites left in the shared topic first. Before the group's first worker starts. The topic is created first
 * if need be: on a fresh broker the first suites to start (several at a time) may come before any worker made it.
 */
export async function startAtTopicEnd(workerGroupId: string): Promise<void> {
  await prepareTestInfrastructure();
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(PLANT_CREATED_TOPIC);
    await admin.setOffsets({
      groupId: workerConsumerGroup(workerGroupId),
      topic: PLANT_CREATED_TOPIC,
      partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })),
    });
  } finally {
    await admin.disconnect();
  }
}
