import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { KafkaNode, startKafka } from '../local-stack/kafka';
import { LOCAL } from '../local-stack/paths';
import { freePort } from './processes';
import { waitFor } from './wait';

// A Kafka broker of a suite's own, for what must not happen to the shared one: pausing it (SIGSTOP) stalls every
// other suite's publishes, and anything else that touches the shared broker's process (a restart, a SIGCONT) would
// make a pause test pass or fail by luck. ~10 s of JVM start, paid by the suite that needs it, beside the others.

export interface OwnBroker {
  /** The bootstrap list, for KAFKA_BROKERS. */
  brokers: string;
  /** Its process, for a suite that kills and starts it again (its signal, whenExited, start). */
  node: KafkaNode;
  /** SIGSTOP, resolved once every thread of the JVM is stopped (a test then knows the broker cannot answer). */
  pause(): Promise<void>;
  /** SIGCONT. */
  resume(): void;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
}

export async function startOwnBroker(prefix: string): Promise<OwnBroker> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const kafka = await startKafka({
    name,
    port: await freePort(),
    controllerPort: await freePort(),
    fresh: true,
    heapMb: 256,
  });
  const node = kafka.service;
  return {
    brokers: kafka.brokers.join(','),
    node,
    async pause() {
      const pid = node.pid;
      if (!pid) throw new Error(`the broker ${name} is not running`);
      node.signal('SIGSTOP');
      await waitFor(`every thread of the broker ${name} stopped`, () => allStopped(pid), 5000, 20);
    },
    resume: () => node.signal('SIGCONT'),
    async stop() {
      node.signal('SIGCONT');
      await kafka.stop();
      fs.rmSync(path.join(LOCAL, 'kafka', name), { recursive: true, force: true });
    },
  };
}

/** Whether every thread of `pid` is stopped ('T' in its stat line), read from /proc (elsewhere: assumed). */
function allStopped(pid: number): boolean {
  const tasks = `/proc/${pid}/task`;
  if (!fs.existsSync(tasks)) return true;
  return fs.readdirSync(tasks).every((tid) => {
    try {
      return fs.readFileSync(`${tasks}/${tid}/stat`, 'utf8').split(') ')[1].startsWith('T');
    } catch {
      return true; // exited meanwhile
    }
  });
}
