import type { Admin } from 'kafkajs';
import { kafkaEnvSchema, loadConfig } from '@app/config';
import { checkGroups } from './ensure-topics';

describe(checkGroups.name, () => {
  const c = loadConfig(kafkaEnvSchema, { KAFKA_BROKERS: 'kafka-1:9092' });
  const failure = (type: string) =>
    Object.assign(new Error(type), {
      name: 'KafkaJSNumberOfRetriesExceeded',
      cause: Object.assign(new Error(type), { type }),
    });
  const admin = (answers: (Error | null)[]) => {
    const fetchOffsets = jest.fn(async () => {
      const next = answers.shift() ?? null;
      if (next) throw next;
      return [];
    });
    return { admin: { fetchOffsets } as unknown as Admin, fetchOffsets };
  };

  it('waits out a group coordinator that a fresh cluster has not elected yet', async () => {
    const a = admin([failure('NOT_COORDINATOR_FOR_GROUP'), failure('GROUP_COORDINATOR_NOT_AVAILABLE'), null]);
    await expect(checkGroups(a.admin, c, ['plant-store-worker'], 'plant.created', 'READ')).resolves.toBeUndefined();
    expect(a.fetchOffsets).toHaveBeenCalledTimes(3);
  });

  it('takes a denied group for what it is at once, naming the ACL', async () => {
    const a = admin([failure('GROUP_AUTHORIZATION_FAILED')]);
    await expect(checkGroups(a.admin, c, ['plant-store-worker'], 'plant.created', 'READ')).rejects.toThrow(
      /READ on GROUP plant-store-worker/,
    );
    expect(a.fetchOffsets).toHaveBeenCalledTimes(1);
  });
});
