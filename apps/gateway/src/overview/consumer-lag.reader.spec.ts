import net from 'node:net';
import { gatewayEnvSchema, loadConfig } from '@app/config';
import { ConsumerLagReader } from './consumer-lag.reader';

// The overview must answer while the broker is away: a refused connection and a broker that accepts and never
// answers both give null ("unknown") within the reader's two-second deadline.
describe(ConsumerLagReader.name, () => {
  const readerFor = (brokers: string) =>
    new ConsumerLagReader(
      loadConfig(gatewayEnvSchema, {
        KAFKA_BROKERS: brokers,
        WEBHOOK_TOKENS: 'webhook-token-0123456789',
        SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
      }),
    );

  it('says null at once when nothing listens', async () => {
    const reader = readerFor('127.0.0.1:1');
    const started = Date.now();
    await expect(reader.lag()).resolves.toBeNull();
    expect(Date.now() - started).toBeLessThan(2500);
    await reader.onApplicationShutdown();
  });

  it('says null after its deadline when the broker never answers, and serves that answer for 2 s', async () => {
    const silent = net.createServer(() => undefined); // accepts, says nothing
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const reader = readerFor(`127.0.0.1:${(silent.address() as net.AddressInfo).port}`);
    const started = Date.now();
    await expect(reader.lag()).resolves.toBeNull();
    expect(Date.now() - started).toBeLessThan(3000);
    const again = Date.now();
    await expect(reader.lag()).resolves.toBeNull(); // the cached answer, not a second wait
    expect(Date.now() - again).toBeLessThan(100);
    await reader.onApplicationShutdown();
    silent.close();
  });
});
