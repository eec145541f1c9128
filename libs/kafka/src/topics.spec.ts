import { Admin } from 'kafkajs';
import { createTopicWithLeaders } from './topics';

const topic = { topic: 'plant.created', numPartitions: 6, replicationFactor: 3 };
const unknownTopic = Object.assign(new Error('This server does not host this topic-partition'), {
  type: 'UNKNOWN_TOPIC_OR_PARTITION',
});

/** An admin whose createTopics fails as kafkajs's does on a KRaft cluster whose asked broker lags behind. */
function laggingAdmin(metadataAnswers: (() => unknown)[]) {
  const fetchTopicMetadata = jest.fn(() => {
    const next = metadataAnswers.shift()!;
    return Promise.resolve().then(next);
  });
  const createTopics = jest.fn(async () => {
    throw unknownTopic;
  });
  return { admin: { createTopics, fetchTopicMetadata } as unknown as Admin, createTopics, fetchTopicMetadata };
}

const withLeader = (leader: number) => () => ({
  topics: [{ name: 'plant.created', partitions: [{ partitionId: 0, leader }] }],
});

describe('createTopicWithLeaders on a cluster', () => {
  it('waits for the leaders when the broker kafkajs asked does not know the new topic yet', async () => {
    const { admin, fetchTopicMetadata } = laggingAdmin([
      () => {
        throw unknownTopic;
      },
      withLeader(-1),
      withLeader(2),
    ]);
    await expect(createTopicWithLeaders(admin, topic)).resolves.toBe(true);
    expect(fetchTopicMetadata).toHaveBeenCalledTimes(3);
  });

  it('still fails on any other error', async () => {
    const { admin, createTopics } = laggingAdmin([]);
    createTopics.mockRejectedValueOnce(new Error('Cluster authorization failed'));
    await expect(createTopicWithLeaders(admin, topic)).rejects.toThrow('authorization');
  });
});
