import { BrokerConnection, BrokerTarget, ConnectBroker, ConnectGuard } from './destination';
import { DestinationPool } from './destination-pool';
import { parseBrokerUrl } from './destination-url';

const guard: ConnectGuard = { resolve: async (h) => h, lookup: (() => undefined) as never, timeoutMs: 200 };
const target = (url: string): BrokerTarget => {
  const p = parseBrokerUrl(url);
  if (!p.ok) throw new Error(p.reason);
  return p.value;
};
const message = { key: '1', messageId: 'msg_1', body: '{}', headers: {} };

/** A broker that opens connections as told, counting them. */
function fakeBroker() {
  const opened: { target: BrokerTarget; connection: BrokerConnection & { broken: boolean; closed: boolean } }[] = [];
  let refuse = false;
  let hold: Promise<void> | null = null;
  const connect: ConnectBroker = async (t) => {
    if (refuse) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const connection = {
      broken: false,
      closed: false,
      publish: async () => {
        if (hold) await hold;
        return 'acked';
      },
      close: async () => {
        connection.closed = true;
      },
    };
    opened.push({ target: t, connection });
    return connection;
  };
  return {
    connect,
    opened,
    refuse: (v: boolean) => (refuse = v),
    holdPublishes: (p: Promise<void> | null) => (hold = p),
  };
}

const connectors = (c: ConnectBroker) => ({ kafka: c, amqp: c, nats: c, mqtt: c, redis: c, sqs: c });

describe('DestinationPool', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 1_000_000));

  it('reuses one connection per broker and credentials, across topics', async () => {
    const broker = fakeBroker();
    const pool = new DestinationPool(connectors(broker.connect), guard, 10, 60_000, now);
    await pool.publish(target('kafka://k1/a'), message);
    await pool.publish(target('kafka://k1/b'), message);
    await pool.publish(target('kafka://other:pw@k1/a'), message);
    expect(broker.opened).toHaveLength(2);
    await pool.close();
    expect(broker.opened.every((o) => o.connection.closed)).toBe(true);
  });

  it("holds one connection per subscription: its old broker's is closed when it moves, unless another uses it", async () => {
    const broker = fakeBroker();
    const pool = new DestinationPool(connectors(broker.connect), guard, 10, 60_000, now);
    // A portal link changing its subscription's URL in a loop: one connection open at a time.
    for (let i = 0; i < 5; i++) await pool.publish(target(`redis://r${i}:6379/k`), message, 'sub-a');
    expect(broker.opened).toHaveLength(5);
    expect(broker.opened.slice(0, 4).every((o) => o.connection.closed)).toBe(true);
    expect(pool.size).toBe(1);
    // A broker two subscriptions use stays open for the one still on it.
    await pool.publish(target('kafka://shared/t'), message, 'sub-b');
    await pool.publish(target('kafka://shared/t'), message, 'sub-c');
    await pool.publish(target('kafka://elsewhere/t'), message, 'sub-b');
    const shared = broker.opened.find((o) => o.target.hosts[0].host === 'shared')!;
    expect(shared.connection.closed).toBe(false);
    await pool.publish(target('kafka://elsewhere/t'), message, 'sub-c');
    expect(shared.connection.closed).toBe(true);
    expect(pool.size).toBe(2); // sub-a's redis, and elsewhere for b and c
    await pool.close();
  });

  it('waits out a backoff after a failed connect, failing at once meanwhile, then tries again', async () => {
    const broker = fakeBroker();
    const pool = new DestinationPool(connectors(broker.connect), guard, 10, 60_000, now);
    broker.refuse(true);
    await expect(pool.publish(target('nats://n1/s'), message)).rejects.toThrow(
      /nats: ECONNREFUSED \(connecting to n1:4222\)/,
    );
    broker.refuse(false);
    await expect(pool.publish(target('nats://n1/s'), message)).rejects.toThrow(/not tried again for 1 s/);
    clock += 1_001;
    await expect(pool.publish(target('nats://n1/s'), message)).resolves.toBe('acked');
    await pool.close();
  });

  /** The backoffs a refusing broker's pool says, after each of `n` failed connects 2 minutes apart. */
  async function backoffs(n: number, maxMs?: number): Promise<string[]> {
    const broker = fakeBroker();
    broker.refuse(true);
    const pool = new DestinationPool(connectors(broker.connect), guard, 10, 60_000, now, maxMs);
    const waits: string[] = [];
    for (let i = 0; i < n; i++) {
      await pool.publish(target('redis://r1/s'), message).catch(() => undefined);
      const err = await pool.publish(target('redis://r1/s'), message).catch((e: Error) => e.message);
      waits.push(String(err).match(/for (\d+) s/)![1]);
      clock += 120_000;
    }
    await pool.close();
    return waits;
  }

  it('doubles the backoff with each failed connect, up to a minute', async () => {
    expect(await backoffs(8)).toEqual(['1', '2', '4', '8', '16', '32', '60', '60']);
  });

  it("keeps the backoff under the bound it is given (the worker: half its breaker's first probe interval)", async () => {
    expect(await backoffs(6, 5_000)).toEqual(['1', '2', '4', '5', '5', '5']);
  });

  it('opens a new connection after one is lost', async () => {
    const broker = fakeBroker();
    const pool = new DestinationPool(connectors(broker.connect), guard, 10, 60_000, now);
    await pool.publish(target('mqtt://m1/t'), message);
    broker.opened[0].connection.broken = true;
    await pool.publish(target('mqtt://m1/t'), message);
    expect(broker.opened).toHaveLength(2);
    expect(broker.opened[0].connection.closed).toBe(true);
    await pool.close();
  });

  it('holds at most its bound: closes the least recently used idle one, refuses when all are busy', async () => {
    const broker = fakeBroker();
    const pool = new DestinationPool(connectors(broker.connect), guard, 2, 60_000, now);
    await pool.publish(target('redis://a/s'), message);
    await pool.publish(target('redis://b/s'), message);
    await pool.publish(target('redis://c/s'), message); // a, the least recently used, makes room
    expect(pool.size).toBe(2);
    expect(broker.opened[0].connection.closed).toBe(true);
    let release!: () => void;
    broker.holdPublishes(new Promise<void>((r) => (release = r)));
    const busy = [pool.publish(target('redis://b/s'), message), pool.publish(target('redis://c/s'), message)];
    await expect(pool.publish(target('redis://d/s'), message)).rejects.toThrow(/all 2 broker connections/);
    release();
    await Promise.all(busy);
    await pool.close();
  });

  it('bounds a publish by the timeout', async () => {
    const broker = fakeBroker();
    const pool = new DestinationPool(connectors(broker.connect), guard, 2, 60_000, now);
    broker.holdPublishes(new Promise<void>(() => undefined));
    await expect(pool.publish(target('amqp://r/?routingKey=q'), message)).rejects.toThrow(
      /amqp: no answer within 200 ms/,
    );
    await pool.close();
  });
});
