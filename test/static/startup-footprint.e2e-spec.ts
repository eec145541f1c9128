import { execFileSync } from 'node:child_process';
import path from 'node:path';

// A broker's client library is loaded with the first connection to a broker of its kind (CONNECTORS in
// libs/delivery/src/destinations/destination-client.ts): together they cost ~20 MB of resident memory, which the
// gateway's memory bound under held bodies (test/gateway/body-budget) cannot spare, nor a worker whose subscribers
// are all HTTP receivers. A static import of one of them anywhere under @app/delivery loads it at start again.
const root = path.resolve(__dirname, '../..');
const BROKER_LIBRARIES = ['@aws-sdk/client-sqs', 'amqplib', 'ioredis', 'mqtt', 'nats'];

const loadedBy = (name: string): string[] =>
  JSON.parse(
    execFileSync(process.execPath, ['tools/run-ts.js', 'test/fixtures/loaded-packages.ts', name], {
      cwd: root,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop()!,
  ) as string[];

describe('what the apps load at start', () => {
  it('loads no broker client library with the delivery library, only with a connection of its kind', () => {
    const loaded = loadedBy('@app/delivery');
    expect(loaded).toContain('undici'); // it did load: the HTTP client is always needed
    expect(loaded.filter((p) => BROKER_LIBRARIES.includes(p))).toEqual([]);
  }, 60_000);
});
