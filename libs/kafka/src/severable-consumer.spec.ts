import { createServer, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';
import { severableSockets } from './severable-consumer';

// The sockets of a consumer let go: a real local TCP server stands in for a broker.
describe('severableSockets', () => {
  let server: Server;
  let port: number;
  const accepted: Socket[] = [];

  beforeAll(async () => {
    server = createServer((s) => accepted.push(s.on('error', () => undefined)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of accepted) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const connect = (factory: ReturnType<typeof severableSockets>['factory']) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = factory({ host: '127.0.0.1', port, ssl: false as never, onConnect: () => resolve(socket) });
      socket.once('error', reject);
    });
  const closed = (s: Socket) =>
    new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

  it('leaves sockets alone until severed, then closes every one it opened', async () => {
    const sockets = severableSockets();
    const [a, b] = [await connect(sockets.factory), await connect(sockets.factory)];
    expect([a.destroyed, b.destroyed, sockets.severed()]).toEqual([false, false, false]);
    sockets.sever();
    await Promise.all([closed(a), closed(b)]);
    expect(sockets.severed()).toBe(true);
  });

  it('refuses every socket asked for once severed: kafkajs sees a connection error, not a member', async () => {
    const sockets = severableSockets();
    sockets.sever();
    await expect(connect(sockets.factory)).rejects.toThrow('this Kafka consumer was let go');
  });

  it('keeps the sockets of another client open', async () => {
    const [mine, theirs] = [severableSockets(), severableSockets()];
    const other = await connect(theirs.factory);
    await connect(mine.factory);
    mine.sever();
    await new Promise((r) => setTimeout(r, 20));
    expect(other.destroyed).toBe(false);
    other.destroy();
  });
});
