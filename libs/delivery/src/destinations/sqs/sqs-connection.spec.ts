import { createHash } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { connectGuard } from '../connect-guard';
import { BrokerConnection, BrokerTarget } from '../destination';
import { connectSqs, messageAttributes } from './sqs-connection';

describe(messageAttributes.name, () => {
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'PlantStore-Webhooks/1.0',
    'webhook-id': 'msg_1',
    'webhook-timestamp': '1795410540',
    'webhook-signature': 'v1,abc= v1,def=',
    'plant-store-hops': '1',
    'X-Tenant': 'acme',
  };

  it('sends the three Standard Webhooks headers as attributes, every other header in one JSON attribute', () => {
    const attributes = messageAttributes({ key: '42', messageId: 'msg_1', body: '{}', headers });
    expect(Object.keys(attributes)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'webhook-headers',
    ]);
    expect(attributes['webhook-signature']).toEqual({ DataType: 'String', StringValue: 'v1,abc= v1,def=' });
    expect(JSON.parse(attributes['webhook-headers'].StringValue!)).toEqual({
      'content-type': 'application/json',
      'user-agent': 'PlantStore-Webhooks/1.0',
      'plant-store-hops': '1',
      'X-Tenant': 'acme',
    });
  });

  it("stays within SQS's 10 attributes however many headers there are, and sends no empty one", () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-h${i}`, 'v']));
    const attributes = messageAttributes({
      key: '1',
      messageId: 'msg_2',
      body: '{}',
      headers: { ...many, 'x-empty': '' },
    });
    expect(Object.keys(attributes).length).toBeLessThanOrEqual(10);
    expect(Object.values(attributes).every((a) => a.StringValue !== '')).toBe(true);
    expect(attributes['webhook-id'].StringValue).toBe('msg_2');
    expect(attributes['webhook-timestamp']).toBeUndefined(); // none given: left out, not sent empty
  });
});

describe('an SQS connection', () => {
  // A server speaking SQS's JSON protocol for SendMessageBatch: each request's entries recorded, an entry whose body
  // asks to be refused answered as SQS refuses one (in `Failed`), the rest accepted with their body's MD5 (the SDK
  // checks it).
  const batches: string[][] = [];
  let refuseWhole = false;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const { Entries } = JSON.parse(text) as { Entries: { Id: string; MessageBody: string }[] };
      batches.push(Entries.map((e) => e.MessageBody));
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      if (refuseWhole && Entries.length > 1) {
        res.statusCode = 400;
        res.setHeader('x-amzn-query-error', 'AWS.SimpleQueueService.BatchRequestTooLong;Sender');
        return res.end(JSON.stringify({ __type: 'com.amazonaws.sqs#BatchRequestTooLong', message: 'too long' }));
      }
      const refused = Entries.filter((e) => e.MessageBody.includes('refuse'));
      res.end(
        JSON.stringify({
          Successful: Entries.filter((e) => !refused.includes(e)).map((e) => ({
            Id: e.Id,
            MessageId: `m-${e.MessageBody}`,
            MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex'),
          })),
          Failed: refused.map((e) => ({ Id: e.Id, SenderFault: true, Code: 'InvalidMessageContents', Message: 'no' })),
        }),
      );
    });
  });
  let connection: BrokerConnection;
  let target: BrokerTarget;

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    target = {
      kind: 'sqs',
      tls: false,
      hosts: [{ host: '127.0.0.1', port }],
      path: '000000000000/plants',
      options: { region: 'us-east-1' },
      settings: {},
      secrets: { username: 'key', password: 'secret' },
    };
    connection = await connectSqs(target, connectGuard(true, 2000));
  });
  afterAll(async () => {
    await connection.close();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    batches.length = 0;
    refuseWhole = false;
  });

  const publish = (body: string) =>
    connection.publish({ key: '1', messageId: `msg_${body}`, body, headers: {} }, target).then(
      (answer) => answer,
      (err: Error) => err.message,
    );

  it('sends what waits for one queue in batches of 10 at most, each message answered by its own entry', async () => {
    const bodies = Array.from({ length: 23 }, (_, i) => `p${i}`);
    const answers = await Promise.all(bodies.map(publish));
    expect(answers).toEqual(bodies.map((b) => `sqs accepted: queue plants message id m-${b}`));
    expect(batches.flat().sort()).toEqual([...bodies].sort());
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(10);
    expect(batches.length).toBeLessThan(bodies.length);
  });

  it('fails an entry SQS refused alone, and sends again one at a time a batch it refused whole', async () => {
    const answers = await Promise.all(['a', 'refuse-me', 'b'].map(publish));
    expect(answers[0]).toBe('sqs accepted: queue plants message id m-a');
    expect(answers[1]).toBe("sqs: the queue refused the message's characters: no (InvalidMessageContents)");
    expect(answers[2]).toBe('sqs accepted: queue plants message id m-b');

    refuseWhole = true;
    expect(await Promise.all(['c', 'd'].map(publish))).toEqual([
      'sqs accepted: queue plants message id m-c',
      'sqs accepted: queue plants message id m-d',
    ]);
    expect(batches.slice(-3).map((b) => b.length)).toEqual([2, 1, 1]);
  });
});
