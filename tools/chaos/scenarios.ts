// The faults, one per scenario, each injected while the load runs and resolved once it is healed (the part
// restarted or resumed). What each one proves is in docs/fault-suite.md.
import { randomBytes } from 'node:crypto';
import { Kafka } from 'kafkajs';
import { kafkaClientConfigFromEnv } from '@app/kafka';
import { ChaosReceiver } from './receiver';
import { ChaosStack, info } from './stack';

export interface FaultContext {
  stack: ChaosStack;
  receiver: ChaosReceiver;
  profile: Profile;
  /** Raw records written to plant.created by the poison scenario (to find them in the dead-letter topic). */
  poisoned: number;
}

export interface Scenario {
  name: string;
  /**
   * At least once allows a second delivery only where a sender of it may have died or lost its record: a worker
   * killed, the database killed or frozen past a delivery's lease. Anywhere else a duplicate fails the scenario.
   */
  duplicatesAllowed?: boolean;
  inject(ctx: FaultContext): Promise<void>;
}

export interface Profile {
  plants: number;
  rate: number;
  postgresPauseMs: number;
  brokerPauseMs: number;
  subscriberFailMs: number;
  poisonRecords: number;
  scenarios: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function killAndRestart(stack: ChaosStack, service: ChaosStack['kafka'], signal: NodeJS.Signals, downMs = 2000) {
  service.signal(signal, { group: true });
  await service.whenExited();
  await sleep(downMs);
  await stack.restart(service);
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'broker SIGKILL, restart',
    inject: ({ stack }) => killAndRestart(stack, stack.kafka, 'SIGKILL', 3000),
  },
  {
    name: 'broker paused past PUBLISH_TIMEOUT_MS',
    async inject({ stack, profile }) {
      stack.kafka.signal('SIGSTOP');
      await sleep(profile.brokerPauseMs);
      stack.kafka.signal('SIGCONT');
    },
  },
  {
    name: 'one worker SIGKILL, restart',
    duplicatesAllowed: true,
    inject: ({ stack }) => killAndRestart(stack, stack.workers[0], 'SIGKILL'),
  },
  {
    name: 'both workers SIGTERM, rolling restart',
    async inject({ stack }) {
      for (const w of stack.workers) await killAndRestart(stack, w, 'SIGTERM', 0);
    },
  },
  {
    name: 'PostgreSQL paused',
    duplicatesAllowed: true,
    async inject({ stack, profile }) {
      stack.postgres.signal('SIGSTOP', { group: true }); // the server and every backend
      await sleep(profile.postgresPauseMs);
      stack.postgres.signal('SIGCONT', { group: true });
    },
  },
  {
    name: 'PostgreSQL SIGKILL, restart',
    duplicatesAllowed: true,
    inject: ({ stack }) => killAndRestart(stack, stack.postgres, 'SIGKILL'),
  },
  {
    name: 'gateway SIGTERM, other gateway SIGKILL',
    async inject({ stack }) {
      await killAndRestart(stack, stack.gateways[0], 'SIGTERM', 0);
      await killAndRestart(stack, stack.gateways[1], 'SIGKILL', 0);
    },
  },
  {
    name: 'subscriber answers 500, then recovers',
    async inject({ receiver, profile }) {
      receiver.fail(profile.subscriberFailMs);
      await sleep(profile.subscriberFailMs);
    },
  },
  {
    name: 'poison burst on plant.created',
    async inject(ctx) {
      const env = { ...process.env, KAFKA_BROKERS: ctx.stack.brokers.join(',') };
      const kafka = new Kafka(kafkaClientConfigFromEnv(env, 'chaos-poison'));
      const producer = kafka.producer();
      await producer.connect();
      const shapes = [
        () => randomBytes(48), // not JSON
        () => Buffer.from('{"specversion":"1.0","type":"plant.created","data":{"id":"x"}}'), // not a plant
        () => Buffer.from('{}'),
      ];
      for (let sent = 0; sent < ctx.profile.poisonRecords; sent += 1000) {
        const n = Math.min(1000, ctx.profile.poisonRecords - sent);
        const messages = Array.from({ length: n }, (_, i) => ({ value: shapes[(sent + i) % shapes.length]() }));
        await producer.send({ topic: 'plant.created', acks: -1, messages });
        ctx.poisoned += n;
      }
      await producer.disconnect();
      info(`  ${ctx.poisoned} raw records written to plant.created`);
    },
  },
];

export const PROFILES: Record<string, Profile> = {
  // npm run chaos: every scenario, 20,000 plants each at 300/s
  full: {
    plants: 20000,
    rate: 300,
    postgresPauseMs: 20000,
    brokerPauseMs: 8000,
    subscriberFailMs: 60000,
    poisonRecords: 20000,
    scenarios: SCENARIOS.map((s) => s.name),
  },
  // npm test: a few thousand plants, the crash faults of each part
  short: {
    plants: 1500,
    rate: 300,
    postgresPauseMs: 6000,
    brokerPauseMs: 6000,
    subscriberFailMs: 10000,
    poisonRecords: 2000,
    scenarios: [
      'broker SIGKILL, restart',
      'one worker SIGKILL, restart',
      'PostgreSQL SIGKILL, restart',
      'gateway SIGTERM, other gateway SIGKILL',
      'poison burst on plant.created',
    ],
  },
};
