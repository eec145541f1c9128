import { randomBytes } from 'node:crypto';
import { kafkaClientConfigFromEnv, letGo, severableConsumer } from '@app/kafka';
import * as e2e from '../tools/support/stack';
import { waitFor } from '../tools/support/wait';

// Issue 33: a consumer the watchdog replaced while it was still joining its group completed the join afterwards
// (kafkajs's disconnect() does nothing to a runner mid-join) and stayed a member, owning partitions it never
// fetched, unwatched: 442 acknowledged plants unstored in the full-size fault run. Against the real broker: a
// consumer let go mid-join must be out of its group within the session timeout, and its successor must get every
// partition.
describe('a consumer let go', () => {
  const kafka = () => kafkaClientConfigFromEnv({ ...process.env }, 'e2e-let-go');
  const topic = 'plant.created';
  const sessionTimeout = 6000;

  beforeAll(() => e2e.prepareTestInfrastructure());

  const members = async (groupId: string) => {
    const admin = e2e.testKafka().admin();
    await admin.connect();
    try {
      const [group] = (await admin.describeGroups([groupId])).groups;
      return group.members.length;
    } finally {
      await admin.disconnect();
    }
  };

  const partitionCount = async () => {
    const admin = e2e.testKafka().admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length;
    } finally {
      await admin.disconnect();
    }
  };

  it('while its join waits on a rebalance leaves the group for good; the others own every partition', async () => {
    const groupId = `e2e-let-go-${randomBytes(4).toString('hex')}`;
    const config = { groupId, sessionTimeout, heartbeatInterval: 2000, rebalanceTimeout: sessionTimeout };
    const partitions = await partitionCount();
    const assigned = new Map<string, number[]>();
    const start = async (name: string) => {
      const c = severableConsumer(kafka(), config);
      c.consumer.on(c.consumer.events.GROUP_JOIN, (e) => assigned.set(name, e.payload.memberAssignment[topic] ?? []));
      await c.consumer.connect();
      await c.consumer.subscribe({ topic });
      return { c, running: c.consumer.run({ eachMessage: async () => undefined }).catch(() => undefined) };
    };
    // A member first: the next one's JoinGroup then waits for it to rejoin (up to its heartbeat interval), and the
    // consumer is let go while that request is pending, as the watchdog did to one stuck joining a moved coordinator.
    const first = await start('first');
    await first.running;
    const old = await start('old');
    await new Promise((r) => setTimeout(r, 300));
    await letGo(old.c, 100);
    assigned.delete('old');
    const successor = await start('successor');
    await successor.running;
    try {
      await waitFor(
        'two members, owning every partition between them',
        async () =>
          (await members(groupId)) === 2 &&
          !assigned.has('old') &&
          [...assigned.values()].reduce((n, p) => n + p.length, 0) === partitions,
        3 * sessionTimeout + 10_000,
      );
    } finally {
      await Promise.all([letGo(first.c, 5000), letGo(successor.c, 5000)]);
    }
  }, 60_000);
});
