import { adminClient } from '../../tools/harness/admin';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// The attack (issue #10, item 5): the send path resolved the subscriber's name to check it, then let the
// HTTP client resolve it again, so a DNS answer that changed in between (rebinding) reached a private
// address. Now the address checked is the one the socket connects to. Here a subscription to a name that
// resolves to loopback is saved through a gateway that allows private networks (as if its DNS had answered
// with a public address then), and a worker that does not allow them must refuse at connect time. On a database
// and topics of its own: a worker that refuses private addresses would fail the other suites' deliveries.
describe('SSRF guard on the send path', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    await receiver.start();
    stack = await startOwnStack(
      'ssrf_send',
      { DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' },
      { worker: (env) => ({ ...env, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false', DELIVERY_RETRY_SCHEDULE: '0s' }) },
    );
    gw = stack.gateway;
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  it('never connects to a name that resolves to a private address, and records why', async () => {
    const admin = adminClient(gw.url);
    const port = new URL(receiver.url).port;
    const sub = await admin.subscribe({ url: `http://localhost:${port}/rebound` });
    try {
      const id = nextId();
      expect((await e2e.postPlant(gw.url, { id, name: 'Rebound' })).status).toBe(200);
      const [delivery] = await waitFor(
        'the delivery to fail',
        async () => {
          const items = await admin.deliveriesOf(sub.id, `&plantId=${id}`);
          return items.length && items[0].status === 'failed' ? items : false;
        },
        30000,
        250,
      );
      const detail = (await admin.call('GET', `/deliveries/${delivery.id}`)).body;
      expect(detail.attemptLog[0].error).toMatch(
        /SSRF guard: localhost resolves to (127\.0\.0\.1|::1), a special-purpose/,
      );
      expect(receiver.on('/rebound')).toEqual([]);
    } finally {
      await admin.call('DELETE', `/subscriptions/${sub.id}`);
    }
  });
});
