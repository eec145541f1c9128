import { randomBytes } from 'node:crypto';
import { Tracing } from '@app/observability';
import { adminClient } from '../../tools/harness/admin';
import { CollectedSpan, OtlpCollector } from '../../tools/harness/otlp-collector';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

// One webhook, one trace: gateway request → Kafka send → worker process → database write → delivery attempt,
// exported by both apps over OTLP/HTTP to a collector on loopback, and continued to the subscriber. On a database
// and topics of its own: its subscribers get this suite's plants alone, each attempt a span of one of its traces.
describe('tracing: OpenTelemetry spans across both apps, exported by OTLP', () => {
  const collector = new OtlpCollector();
  const receiver = new Receiver();
  let stack: OwnStack;
  let topic: string;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  let subscriptionId: string;
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    await collector.start();
    await receiver.start();
    stack = await startOwnStack('tracing', {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      DELIVERY_RETRY_SCHEDULE: '0s,300ms,300ms',
    });
    ({ gateway: gw, worker } = stack);
    topic = `${stack.env.KAFKA_TOPIC_PREFIX}plant.created`;
    ({ id: subscriptionId } = await adminClient(gw.url).subscribe({ url: `${receiver.url}/traced` }));
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
    await collector.stop();
  });

  /** Both apps' buffered spans, sent now rather than after the batch delay. */
  const flush = () => Promise.all([gw.app.get(Tracing).flush(), worker.app.get(Tracing).flush()]);

  it('gives one webhook one connected trace from the sender to the subscriber', async () => {
    // Its own trace id: the collector keeps every span of the run.
    const senderTrace = randomBytes(16).toString('hex');
    const senderSpan = randomBytes(8).toString('hex');
    const id = nextId();
    const res = await e2e.postPlant(
      gw.url,
      { id, name: 'Traced fern' },
      { traceparent: `00-${senderTrace}-${senderSpan}-01` },
    );
    expect(res.status).toBe(200);
    const [delivered] = await waitFor(
      'the delivery',
      () => receiver.on('/traced', id)[0] && receiver.on('/traced', id),
    );

    const spans = await waitFor('the attempt span exported', async () => {
      await flush();
      const trace = collector.spans.filter((s) => s.traceId === senderTrace);
      return trace.some((s) => s.kind === CLIENT && s.attributes['http.request.method'] === 'POST') ? trace : null;
    });
    const one = (kind: number, service: string, name: RegExp) => {
      const found = spans.filter((s) => s.kind === kind && s.service === service && name.test(s.name));
      expect(found).toHaveLength(1);
      return found[0];
    };
    const request = one(SERVER, 'plant-store-gateway', /^POST \/plant\/webhook$/);
    const send = one(PRODUCER, 'plant-store-gateway', new RegExp(`^send ${topic.replaceAll('.', '\\.')}$`));
    const processed = one(CONSUMER, 'plant-store-worker', new RegExp(`^process ${topic.replaceAll('.', '\\.')}$`));
    const stored = one(CLIENT, 'plant-store-worker', /^INSERT plants$/);
    const attempt = one(CLIENT, 'plant-store-worker', /^POST$/);

    // Connected: each span's parent is the one before it, the first continues the sender's.
    expect(request.parentSpanId).toBe(senderSpan);
    expect(send.parentSpanId).toBe(request.spanId);
    expect(processed.parentSpanId).toBe(send.spanId);
    expect(stored.parentSpanId).toBe(processed.spanId);
    expect(attempt.parentSpanId).toBe(processed.spanId);
    // The subscriber receives the attempt's own context, so its spans join the same trace.
    expect(delivered.headers.traceparent).toBe(`00-${senderTrace}-${attempt.spanId}-01`);

    // Semantic conventions for HTTP and messaging.
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/plant/webhook',
      'http.response.status_code': 200,
      'url.path': '/plant/webhook',
    });
    const { eventId } = JSON.parse(JSON.stringify(await res.json())) as { eventId: string };
    expect(send.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.type': 'send',
      'messaging.destination.name': topic,
      'messaging.message.id': eventId,
      'messaging.kafka.message.key': String(id),
    });
    expect(processed.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.type': 'process',
      'messaging.destination.name': topic,
      'messaging.message.id': eventId,
      'messaging.consumer.group.name': expect.stringMatching(/-server$/),
    });
    expect(processed.attributes['messaging.kafka.offset']).toEqual(expect.any(Number));
    expect(stored.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.collection.name': 'plants' });
    expect(attempt.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 204,
      'url.full': `${receiver.url}/traced`,
      'server.address': '127.0.0.1',
      'plant_store.subscription.id': subscriptionId,
    });
    expect(collector.requests.every((r) => r.path === '/v1/traces' && /json/.test(r.contentType ?? ''))).toBe(true);
  });

  it('records a failed attempt and its retry as error spans in the same trace, without the URL query', async () => {
    const { id: failing } = await adminClient(gw.url).subscribe({ url: `${receiver.url}/fails?token=hunter2-secret` });
    receiver.behave('/fails?token=hunter2-secret', (_r, nth) => ({ status: nth === 1 ? 503 : 204 }));
    try {
      const id = nextId();
      const res = await e2e.postPlant(gw.url, { id, name: 'Retried fern' });
      expect(res.status).toBe(200);
      await waitFor('the retry delivered', () => receiver.on('/fails?token=hunter2-secret', id).length >= 2);
      const attempts = await waitFor('both attempt spans', async () => {
        await flush();
        const mine = collector.spans.filter(
          (s: CollectedSpan) => s.kind === CLIENT && s.attributes['plant_store.subscription.id'] === failing,
        );
        return mine.length >= 2 ? mine : null;
      });
      expect(new Set(attempts.map((s) => s.traceId)).size).toBe(1);
      expect(new Set(attempts.map((s) => s.parentSpanId)).size).toBe(1);
      const [first, second] = attempts;
      expect(first.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
      expect(first.status.code).toBe(2); // ERROR
      expect(second.attributes).toMatchObject({ 'http.response.status_code': 204, 'http.request.resend_count': 1 });
      expect(JSON.stringify(collector.spans)).not.toContain('hunter2');
    } finally {
      await adminClient(gw.url).call('DELETE', `/subscriptions/${failing}`);
    }
  }, 60_000);
});
