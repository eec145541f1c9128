import { GatewayConfig, gatewayEnvSchema, loadConfig } from '@app/config';
import { ProblemException } from '@app/observability';
import { SendableSubscription } from '@app/persistence';
import { MAX_TEST_SENDS, SubscriptionTester } from './subscription-tester';
import { TestSendSlot, TestSendSlots } from './test-send-slots';

const slot = (s: ReturnType<TestSendSlots['take']>): TestSendSlot => {
  if ('refused' in s) throw new Error(`refused: ${s.refused}`);
  return s;
};

describe(TestSendSlots.name, () => {
  it('keeps a subscription within its share, and tells it when its oldest send is answered at the latest', () => {
    let now = 1_000;
    const slots = new TestSendSlots(16, 2, 15_000, () => now);
    slot(slots.take('slow'));
    now += 4_000;
    slot(slots.take('slow'));
    expect(slots.take('slow')).toEqual({ refused: 'share', retryAfterMs: 11_000 }); // the first started 4 s ago
    expect(slots.held('slow')).toBe(2);
    expect(slots.held()).toBe(2); // a refusal takes nothing
    slot(slots.take('other')); // the others keep the rest
  });

  it('says "share" before "total", so the subscription past its share is told so', () => {
    const slots = new TestSendSlots(2, 1, 15_000);
    slot(slots.take('a'));
    slot(slots.take('b'));
    expect(slots.take('a')).toMatchObject({ refused: 'share' });
    expect(slots.take('c')).toEqual({ refused: 'total' });
  });

  it('gives a slot back once, however often released, and keeps no entry for a subscription with none', () => {
    const slots = new TestSendSlots(16, 2, 15_000);
    const first = slot(slots.take('a'));
    const second = slot(slots.take('a'));
    first.release();
    first.release();
    expect(slots.held('a')).toBe(1);
    expect(slots.held()).toBe(1);
    second.release();
    expect(slots.held()).toBe(0);
    expect(slots.held('a')).toBe(0);
    slot(slots.take('a'));
    slot(slots.take('a'));
  });
});

// Issue 36, finding 7: a portal link with a slow endpoint held the gateway's 16 test sends, and the operator's test
// of another subscription got 503. Replayed on the tester, its client a fake whose receivers answer when told.
describe('SubscriptionTester under a slow receiver', () => {
  const config = (env: Record<string, string> = {}): GatewayConfig =>
    loadConfig(gatewayEnvSchema, {
      WEBHOOK_TOKENS: 'a'.repeat(32),
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      ...env,
    });
  const subscription = (id: string) =>
    ({
      id,
      url: `https://${id}.example/hook`,
      token: null,
      secrets: [],
      headers: {},
      secretHeaders: {},
    }) as unknown as SendableSubscription;

  function tester() {
    const t = new SubscriptionTester(config());
    const answers: (() => void)[] = [];
    const ok = { status: 204, latencyMs: 1, error: null, responseBody: '', retryAfterMs: null, signature: 'v1,x' };
    const send = () => new Promise((resolve) => answers.push(() => resolve(ok)));
    Object.assign(t as unknown as { client: object }, { client: { send, close: async () => {} } });
    return { t, answerAll: () => answers.splice(0).forEach((answer) => answer()) };
  }
  const statusOf = (p: Promise<unknown>) =>
    p.then(
      () => 200,
      (err: ProblemException) => err.problem.status,
    );

  it('answers 429 past the share to that subscription alone; another subscription still gets its test', async () => {
    const { t, answerAll } = tester();
    const pinned = [t.send(subscription('slow'), {}), t.send(subscription('slow'), {})];
    const refused = await t.send(subscription('slow'), {}).catch((err: ProblemException) => err);
    expect(refused).toBeInstanceOf(ProblemException);
    const problem = refused as ProblemException;
    expect(problem.problem).toMatchObject({
      type: 'https://plant.store/problems/too-many-requests',
      status: 429,
      reason: 'test-send-share',
      subscriptionId: 'slow',
      retryAfterSeconds: 15, // DELIVERY_TIMEOUT_MS: when the oldest is answered at the latest
    });
    expect(problem.problem.detail).toMatch(/2 test sends of subscription slow are already waiting .*retry in 15 s/);
    expect(problem.headers).toEqual({ 'retry-after': '15' });
    const other = t.send(subscription('other'), {});
    answerAll();
    expect(await Promise.all([...pinned, other].map(statusOf))).toEqual([200, 200, 200]);
    const again = t.send(subscription('slow'), {}); // its room is back
    answerAll();
    expect(await statusOf(again)).toBe(200);
  });

  it('keeps the gateway-wide bound: the 17th at once, of a ninth subscription, gets 503 with Retry-After', async () => {
    const { t, answerAll } = tester();
    const held = Array.from({ length: MAX_TEST_SENDS }, (_, i) => t.send(subscription(`s${i % 8}`), {}));
    const refused = (await t.send(subscription('s8'), {}).catch((err) => err)) as ProblemException;
    expect(refused.problem.status).toBe(503);
    expect(refused.headers).toEqual({ 'retry-after': '5' });
    expect(refused.problem.detail).toMatch(/16 test sends are already waiting/);
    answerAll();
    expect(new Set(await Promise.all(held.map(statusOf)))).toEqual(new Set([200]));
  });

  it('takes TEST_SENDS_PER_SUBSCRIPTION from the environment: 2 by default, at most the 16 of a gateway', () => {
    expect(config().TEST_SENDS_PER_SUBSCRIPTION).toBe(2);
    expect(config({ TEST_SENDS_PER_SUBSCRIPTION: String(MAX_TEST_SENDS) }).TEST_SENDS_PER_SUBSCRIPTION).toBe(16);
    expect(() => config({ TEST_SENDS_PER_SUBSCRIPTION: String(MAX_TEST_SENDS + 1) })).toThrow(
      /TEST_SENDS_PER_SUBSCRIPTION: .*at most 16/,
    );
    expect(() => config({ TEST_SENDS_PER_SUBSCRIPTION: '0' })).toThrow(/TEST_SENDS_PER_SUBSCRIPTION/);
  });
});
