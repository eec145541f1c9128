import { Socket } from 'node:net';
import { Consumer, ConsumerConfig, ISocketFactory, Kafka, KafkaConfig } from 'kafkajs';
// kafkajs's own factory (plain or TLS, keep-alive), pinned with kafkajs 2.2.4 like kafkajs-fixes: the sockets
// are the same as without this wrapper.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const defaultSocketFactory: () => ISocketFactory = require('kafkajs/src/network/socketFactory');

/** A consumer with a client of its own, and the means to cut that client off for good. */
export interface SeverableConsumer {
  consumer: Consumer;
  /**
   * Closes every socket of the consumer's client and refuses every new one, and it never restarts itself. A
   * consumer let go this way can neither stay in its group (its heartbeats stop: the coordinator drops it after
   * the session timeout) nor join it again.
   */
  sever(): void;
}

/**
 * Why a consumer the watchdog replaced must be cut off, not only asked to disconnect: kafkajs 2.2.4's
 * `consumer.disconnect()` returns at once while its runner is still joining the group (Runner.stop() does
 * nothing until the join ends), and the join then completes on connections it reopens by itself. The fault suite
 * caught such a consumer (group coordinator SIGKILL, 20,000 plants): a third member in a group of two workers,
 * heartbeating, owning two partitions and fetching one of them never, unwatched because it was no longer the
 * worker's consumer; 442 acknowledged plants stayed unstored until the next rebalance.
 */
export function severableConsumer(kafkaConfig: KafkaConfig, consumerConfig: ConsumerConfig): SeverableConsumer {
  const sockets = severableSockets();
  const restartOnFailure = consumerConfig.retry?.restartOnFailure;
  const kafka = new Kafka({ ...kafkaConfig, socketFactory: sockets.factory });
  const consumer = kafka.consumer({
    ...consumerConfig,
    retry: {
      ...consumerConfig.retry,
      restartOnFailure: async (err) => !sockets.severed() && (restartOnFailure ? restartOnFailure(err) : true),
    },
  });
  return { consumer, sever: sockets.sever };
}

/** kafkajs's socket factory, with every socket it opened closed by `sever()`, and every later one refused. */
export function severableSockets(base: ISocketFactory = defaultSocketFactory()) {
  const open = new Set<Socket>();
  let severed = false;
  const factory: ISocketFactory = (args) => {
    const socket = base(args);
    if (severed) {
      process.nextTick(() => socket.destroy(new Error('this Kafka consumer was let go')));
      return socket;
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    return socket;
  };
  return {
    factory,
    severed: () => severed,
    sever() {
      severed = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
  };
}

/**
 * Lets a replaced consumer go: asks it to disconnect, waits at most `ms` (a stuck kafkajs consumer may never
 * finish stopping), then severs it, whether or not it said it stopped.
 */
export async function letGo(target: SeverableConsumer, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    target.consumer.disconnect().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
  target.sever();
}
