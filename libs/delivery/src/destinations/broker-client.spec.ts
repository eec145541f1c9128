import { Webhook } from 'standardwebhooks';
import { attemptSucceeded } from '../outcome';
import { BrokerClient } from './broker-client';
import { BrokerMessage, ConnectBroker, ConnectGuard } from './destination';
import { DestinationPool } from './destination-pool';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const guard: ConnectGuard = { resolve: async (h) => h, lookup: (() => undefined) as never, timeoutMs: 500 };

function clientWith(publish: (m: BrokerMessage) => Promise<string>) {
  const connect: ConnectBroker = async () => ({ broken: false, publish, close: async () => undefined });
  const pool = new DestinationPool(
    { kafka: connect, amqp: connect, nats: connect, mqtt: connect, redis: connect, sqs: connect },
    guard,
    4,
    60_000,
  );
  return { client: new BrokerClient(pool), pool };
}

const request = {
  url: 'kafka://k1:9092/plants',
  messageId: 'msg_2Yf',
  body: '{"id":7,"name":"Fern"}',
  secrets: [SECRET],
  token: null,
  headers: { 'x-team': 'shop' },
  hops: 0,
  originEventId: 'msg_2Yf',
  plantId: 7,
};

describe('BrokerClient', () => {
  it('publishes the signed webhook keyed by its plant, and records what the broker answered', async () => {
    const sent: BrokerMessage[] = [];
    const { client, pool } = clientWith(async (m) => (sent.push(m), 'kafka acked: partition 0 offset 3'));
    const result = await client.send(request);
    expect(result).toMatchObject({ status: null, error: null, responseBody: 'kafka acked: partition 0 offset 3' });
    expect(attemptSucceeded(result)).toBe(true);
    expect(sent[0].key).toBe('7');
    expect(sent[0].messageId).toBe('msg_2Yf');
    expect(sent[0].headers['x-team']).toBe('shop');
    expect(sent[0].headers.authorization).toBeUndefined();
    expect(new Webhook(SECRET).verify(sent[0].body, sent[0].headers)).toEqual({ id: 7, name: 'Fern' });
    await pool.close();
  });

  it('makes a refusal an attempt with an error, the credentials taken out of what the broker said', async () => {
    const { client, pool } = clientWith(async () => {
      throw new Error('amqp: ACCESS_REFUSED for user app with password hunter22');
    });
    const result = await client.send({
      ...request,
      url: 'amqp://r1/?routingKey=q',
      destination: { settings: {}, secrets: { username: 'app', password: 'hunter22' } },
    });
    expect(result.status).toBeNull();
    expect(result.error).toBe('amqp: ACCESS_REFUSED for user app with password [redacted]');
    expect(attemptSucceeded(result)).toBe(false);
    await pool.close();
  });

  it('refuses a URL it cannot read, before signing', async () => {
    const { client, pool } = clientWith(async () => 'never');
    const result = await client.send({ ...request, url: 'nats://n1/bad subject' });
    expect(result.error).toMatch(/^the URL has a subject that is not valid/);
    expect(result.signature).toBeNull();
    await pool.close();
  });
});
