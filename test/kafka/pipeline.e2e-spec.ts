import { randomUUID } from 'node:crypto';
import { Consumer, KafkaMessage, Producer } from 'kafkajs';
import { newPlantCreatedEvent, PLANT_CREATED_DLQ_TOPIC, PLANT_CREATED_TOPIC } from '@app/contracts';
import * as e2e from '../../tools/harness/stack';
import { metricSum, metricValues } from '../../tools/harness/metrics';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { TcpProxy, viaProxy } from '../../tools/harness/tcp-proxy';
import { waitFor } from '../../tools/harness/wait';

// Webhook → gateway → Kafka → worker → PostgreSQL, all real. On a database and topics of its own: its worker stores
// this suite's plants alone (its pages of plants, its lag, its reused keys are its own), and sends no other suite's
// deliveries.
describe('pipeline: a New Plant webhook becomes a stored plant', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  /** Its plant.created and dead-letter topics. */
  let topic: string;
  let dlqTopic: string;
  let producer: Producer;
  let dlqReader: Consumer;
  let groupId: string;
  const deadLetters: KafkaMessage[] = [];
  const dbProxy = new TcpProxy(
    new URL(process.env.DATABASE_URL!).hostname,
    Number(new URL(process.env.DATABASE_URL!).port),
  );
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    await dbProxy.up();
    // The worker reaches PostgreSQL through a proxy the outage test can cut.
    stack = await startOwnStack(
      'pipeline',
      {},
      { worker: (env) => ({ ...env, DATABASE_URL: viaProxy(env.DATABASE_URL!, dbProxy) }) },
    );
    ({ gateway: gw, worker } = stack);
    groupId = `${stack.env.WORKER_GROUP_ID}-server`;
    topic = `${stack.env.KAFKA_TOPIC_PREFIX}${PLANT_CREATED_TOPIC}`;
    dlqTopic = `${stack.env.KAFKA_TOPIC_PREFIX}${PLANT_CREATED_DLQ_TOPIC}`;
    producer = e2e.testKafka().producer();
    await producer.connect();
    dlqReader = await e2e.startReader(dlqTopic, (message) => void deadLetters.push(message));
  });

  afterAll(async () => {
    await dlqReader?.disconnect();
    await producer?.disconnect();
    await stack?.close();
    await dbProxy.down();
  });

  const getPlant = (id: number) =>
    fetch(`${gw.url}/plants/${id}`, { headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` } });
  const storedPlant = async (id: number) => {
    const res = await getPlant(id);
    return res.status === 200
      ? ((await res.json()) as { id: number; name: string; tag?: string; lastEventId: string })
      : null;
  };
  const rowCount = async (sql: string, params: unknown[]) =>
    Number((await stack.db.pool.query(sql, params)).rows[0].count);

  it('stores the plant and serves it from GET /plants/{id}', async () => {
    const id = nextId();
    const res = await e2e.postPlant(gw.url, { id, name: 'Monstera', tag: 'indoor' });
    const { eventId } = (await res.json()) as { eventId: string };
    const plant = await waitFor('the plant in the store', () => storedPlant(id));
    expect(plant).toMatchObject({ id, name: 'Monstera', tag: 'indoor', lastEventId: eventId });
  });

  it('answers 404 as problem+json for a plant that is not stored', async () => {
    const res = await getPlant(nextId());
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it.each(['abc', '1.5', '9007199254740992', '-9007199254740992'])(
    'refuses plant id %p with 422 naming id, as the document declares it',
    async (raw) => {
      const res = await fetch(`${gw.url}/plants/${raw}`, { headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` } });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { errors: unknown }).errors).toEqual([
        { field: 'id', message: expect.any(String) },
      ]);
    },
  );

  it("accepts what the published NewPlant accepts: id 0, as Swagger UI's own example sends, and negative ids", async () => {
    for (const id of [0, -nextId()]) {
      const name = `Example ${randomUUID()}`; // id 0 may already be stored by an earlier run: a new name changes it
      expect((await e2e.postPlant(gw.url, { id, name })).status).toBe(200);
      await waitFor(`plant ${id} stored`, async () => {
        const res = await getPlant(id);
        return res.status === 200 && ((await res.json()) as { name: string }).name === name;
      });
    }
  });

  it('pages through plants newest first with a cursor', async () => {
    const ids = [nextId(), nextId(), nextId()];
    for (const id of ids) {
      await e2e.postPlant(gw.url, { id, name: `P${id}` });
      await waitFor(`plant ${id} stored`, () => storedPlant(id)); // one after the other: a known order
    }
    const page = async (q: string) =>
      (await (
        await fetch(`${gw.url}/plants?${q}`, { headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` } })
      ).json()) as {
        items: { id: number; createdAt: string }[];
        nextCursor: string | null;
      };
    // Walk every page: no plant twice, none missing, the later-stored first.
    const all: { id: number; createdAt: string }[] = [];
    let cursor: string | null = null;
    do {
      const p = await page(`limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(p.items.length).toBeLessThanOrEqual(7);
      all.push(...p.items);
      cursor = p.nextCursor;
    } while (cursor);
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    expect(all.map((p) => p.id).filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    const bad = await fetch(`${gw.url}/plants?limit=501`, {
      headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` },
    });
    expect(bad.status).toBe(422);
  });

  it('applies a repeated webhook-id and a redelivered event once', async () => {
    const id = nextId();
    for (let i = 0; i < 3; i++)
      expect((await e2e.postPlant(gw.url, { id, name: 'Once' }, { 'webhook-id': `dup-${id}` })).status).toBe(200);
    const event = newPlantCreatedEvent({ id, name: 'Once' }, { source: '/e2e', idempotencyKey: `dup-${id}` });
    await producer.send({ topic, messages: [{ key: String(id), value: JSON.stringify(event) }] });
    await waitFor('the plant', () => storedPlant(id));
    await waitFor('the redelivery to be processed', async () => {
      const m = await (await fetch(`${worker.url}/metrics`)).text();
      return /plant_store_events_total\{[^}]*outcome="duplicate"[^}]*\} [1-9]/.test(m);
    });
    expect(await rowCount('SELECT count(*) FROM processed_events WHERE plant_id = $1', [id])).toBe(1);
    expect(await rowCount('SELECT count(*) FROM plants WHERE id = $1', [id])).toBe(1);
  });

  it('tells the operator when a key is reused with another plant on a replica that could not refuse it', async () => {
    const other = await e2e.startGateway(stack.env);
    try {
      const id = nextId();
      const key = `msg_${randomUUID()}`;
      const before = await metricSum(worker.url, 'plant_store_events_total', 'outcome="key_reused"');
      expect((await e2e.postPlant(gw.url, { id, name: 'First' }, { 'webhook-id': key })).status).toBe(200);
      await waitFor('the first plant stored', () => storedPlant(id));
      // This gateway has not seen the key (each replica remembers its own), so it cannot answer 409.
      expect((await e2e.postPlant(other.url, { id, name: 'Second' }, { 'webhook-id': key })).status).toBe(200);
      await waitFor('the reuse counted', async () =>
        (await metricSum(worker.url, 'plant_store_events_total', 'outcome="key_reused"')) === before + 1 ? true : null,
      );
      expect(await storedPlant(id)).toMatchObject({ name: 'First' });
      // The replica that saw the key refuses the reuse itself.
      const refused = await e2e.postPlant(gw.url, { id, name: 'Second' }, { 'webhook-id': key });
      expect(refused.status).toBe(409);
    } finally {
      await other.close();
    }
  });

  it('keeps the newer plant when an older event arrives after it', async () => {
    const id = nextId();
    const newer = newPlantCreatedEvent(
      { id, name: 'Newer' },
      { source: '/e2e', now: new Date('2030-01-02T00:00:00Z') },
    );
    const older = newPlantCreatedEvent(
      { id, name: 'Older' },
      { source: '/e2e', now: new Date('2030-01-01T00:00:00Z') },
    );
    await producer.send({ topic, messages: [{ key: String(id), value: JSON.stringify(newer) }] });
    await waitFor('the newer plant', async () => (await storedPlant(id))?.name === 'Newer');
    await producer.send({ topic, messages: [{ key: String(id), value: JSON.stringify(older) }] });
    await waitFor(
      'the older event to be recorded',
      async () => (await rowCount('SELECT count(*) FROM processed_events WHERE event_id = $1', [older.id])) === 1,
    );
    expect(await storedPlant(id)).toMatchObject({ name: 'Newer', lastEventId: newer.id });
  });

  it('dead-letters a poison record with its reason and origin, and still stores the next valid event', async () => {
    const id = nextId();
    const poisonKey = `poison-${id}`;
    await producer.send({
      topic,
      messages: [
        { key: poisonKey, value: 'this is not json', headers: { 'x-test': 'kept' } },
        {
          key: String(id),
          value: JSON.stringify(newPlantCreatedEvent({ id, name: 'After poison' }, { source: '/e2e' })),
        },
      ],
    });
    const letter = await waitFor('the dead letter', () => deadLetters.find((m) => m.key?.toString() === poisonKey));
    expect(letter.value!.toString()).toBe('this is not json');
    expect(letter.headers!['x-error']!.toString()).toMatch(/not JSON/);
    expect(letter.headers!['x-origin-topic']!.toString()).toBe(topic);
    expect(letter.headers!['x-origin-partition']).toBeDefined();
    expect(letter.headers!['x-origin-offset']).toBeDefined();
    expect(letter.headers!['x-test']!.toString()).toBe('kept');
    await waitFor('the valid event after the poison', () => storedPlant(id));
  });

  it('dead-letters a value the store cannot hold (NUL byte) without blocking the rest of its batch', async () => {
    const bad = nextId();
    const good = nextId();
    await producer.send({
      topic,
      messages: [
        {
          key: String(bad),
          value: JSON.stringify(newPlantCreatedEvent({ id: bad, name: 'nul\u0000byte' }, { source: '/e2e' })),
        },
        {
          key: String(bad),
          value: JSON.stringify(newPlantCreatedEvent({ id: good, name: 'same batch' }, { source: '/e2e' })),
        },
      ],
    });
    await waitFor('the good plant', () => storedPlant(good));
    const letter = await waitFor('the unstorable one in the DLQ', () =>
      deadLetters.find((m) => m.key?.toString() === String(bad)),
    );
    expect(letter.headers!['x-error']!.toString()).toMatch(/data\.name must not contain NUL/);
  });

  // Issue 25, item 5: a 200 means the plant is stored, exactly as sent, whatever extra properties it carries:
  // what the gateway accepts at the edge of what PostgreSQL holds (control characters, paired surrogates, keys of
  // any script, numbers at the edge of a double) comes back from the jsonb column unchanged.
  it('stores every extra property it answered 200 for, exactly as sent', async () => {
    const id = nextId();
    const text =
      `{"id":${id},"name":"Ficus \\ud83c\\udf3f","care":{"\u00e9\u200b\ud83c\udf35":["\\u0001","\\ud83c\\udf3f",null,true,""],` +
      `"deep":{"a":{"b":[1,[2,[3]]]}}},"big":9007199254740991,"tiny":5e-324,"sci":1e21,"dec":0.1,"frac":1.50,"neg":-12.5}`;
    expect((await e2e.postPlant(gw.url, text)).status).toBe(200);
    await waitFor('the plant in the store', () => storedPlant(id));
    const { id: _id, name, ...extra } = JSON.parse(text);
    const { rows } = await stack.db.pool.query('SELECT name, extra FROM plants WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ name, extra });
  });

  it('dead-letters, for the reason the gateway gives, an event written around it that it would have refused', async () => {
    const [nul, key, rounded] = [nextId(), nextId(), nextId()];
    const event = (data: Record<string, unknown>) =>
      JSON.stringify(newPlantCreatedEvent(data as never, { source: '/e2e' }));
    await producer.send({
      topic,
      messages: [
        { key: String(nul), value: event({ id: nul, name: 'x', note: 'a\u0000b' }) },
        { key: String(key), value: event({ id: key, name: 'x', care: { 'a\u0000': 1 } }) },
        {
          key: String(rounded),
          value: event({ id: rounded, name: 'x' }).replace('"data":{', '"data":{"stock":9007199254740993,'),
        },
      ],
    });
    const reason = async (id: number) =>
      (
        await waitFor(`plant ${id} in the DLQ`, () => deadLetters.find((m) => m.key?.toString() === String(id)))
      ).headers!['x-error']!.toString();
    expect(await reason(nul)).toMatch(/data\.note must not contain NUL/);
    expect(await reason(key)).toMatch(/data\.care\.a\\u0000 is a property name with NUL/);
    expect(await reason(rounded)).toMatch(/cannot be carried exactly .* at data\.stock$/);
    expect(await rowCount('SELECT count(*) FROM plants WHERE id = ANY($1)', [[nul, key, rounded]])).toBe(0);
  });

  /** The group's lag as the broker sees it: high watermark minus committed offset, summed over partitions. */
  const brokerLag = async () => {
    const admin = e2e.testKafka().admin();
    await admin.connect();
    try {
      const [high, [committed]] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId, topics: [topic] }),
      ]);
      const done = new Map(committed.partitions.map((p) => [p.partition, Number(p.offset)]));
      return high.reduce((n, p) => n + Number(p.high) - Math.max(done.get(p.partition) ?? 0, Number(p.low)), 0);
    } finally {
      await admin.disconnect();
    }
  };
  const metric = (name: string) => metricValues(worker.url, name);

  it('loses nothing while the database is away, reports the real lag meanwhile, and commits once idle', async () => {
    await dbProxy.down();
    const ids = Array.from({ length: 20 }, () => nextId());
    for (const id of ids) expect((await e2e.postPlant(gw.url, { id, name: `During outage ${id}` })).status).toBe(200);
    // The worker notices, retries with backoff, and reports it is not ready.
    await waitFor(
      'the worker to report the database down',
      async () => (await fetch(`${worker.url}/readyz`)).status === 503,
      20000,
    );
    expect(await rowCount('SELECT count(*) FROM plants WHERE id = ANY($1::bigint[])', [ids])).toBe(0);
    // The attack saw plant_store_consumer_lag at 0 here while the broker's lag grew, and a stale pending count.
    await waitFor(
      'the lag metric to show the waiting events',
      async () => (await metric('plant_store_consumer_lag')).reduce((a, b) => a + b, 0) >= ids.length,
      15000,
      500,
    );
    await waitFor(
      'pending deliveries reported as unknown',
      async () => (await metric('plant_store_deliveries_pending')).every(Number.isNaN),
      15000,
      500,
    );
    await dbProxy.up();
    await waitFor(
      'every plant',
      async () => (await rowCount('SELECT count(*) FROM plants WHERE id = ANY($1::bigint[])', [ids])) === ids.length,
      45000,
      250,
    );
    await waitFor('the worker ready again', async () => (await fetch(`${worker.url}/readyz`)).status === 200);
    // No traffic now: what was stored must still be committed within about a second (it waited for new records).
    await waitFor(
      'the group committed up to the high watermark with no new traffic',
      async () => (await brokerLag()) === 0,
      5000,
      250,
    );
    await waitFor(
      'the lag metric back to 0',
      async () => (await metric('plant_store_consumer_lag')).every((n) => n === 0),
      15000,
      500,
    );
  }, 90000);
});
