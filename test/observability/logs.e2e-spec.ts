import { randomBytes } from 'node:crypto';
import * as e2e from '../../tools/harness/stack';
import { adminClient } from '../../tools/harness/admin';
import { OwnDatabase, ownDatabase } from '../../tools/harness/own-stack';
import { exitOf, freePort, spawnBuiltApp } from '../../tools/harness/processes';
import { Receiver } from '../../tools/harness/receiver';
import { waitFor } from '../../tools/harness/wait';

// What the two apps write while a plant flows through them and a subscriber fails once, at the most verbose
// level: one format (JSON, the level as a word), a summary line of the flow, a warning naming the failing
// subscriber, Nest's start-up wiring and the Kafka client's retried states kept out of info and error, and
// never a token, a secret or the key that seals them, at any level. On a database and topics of its own: its
// worker sends this suite's deliveries alone, and stores its plant alone.

describe('logs', () => {
  const subscriberToken = `subscriber-${randomBytes(12).toString('hex')}`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  let receiver: Receiver;
  let gateway: ReturnType<typeof spawnBuiltApp>;
  let worker: ReturnType<typeof spawnBuiltApp>;
  let url: string;
  let own: OwnDatabase;

  beforeAll(async () => {
    receiver = new Receiver();
    await receiver.start();
    receiver.behave('/once', (_r, nth) => ({ status: nth === 1 ? 500 : 204 }));
    const port = await freePort();
    own = await ownDatabase('logs', {
      LOG_LEVEL: 'trace',
      LOG_SUMMARY_MS: '1000',
      DELIVERY_RETRY_SCHEDULE: '0s,1s',
      PORT: String(port),
      WORKER_METRICS_PORT: String(await freePort()),
    });
    const { env } = own;
    // The gateway checks the database and the topics the worker's set-up makes: made first, so both can start.
    await e2e.prepareInfrastructureFor(env);
    worker = spawnBuiltApp('worker', env);
    gateway = spawnBuiltApp('gateway', env);
    url = `http://127.0.0.1:${port}`;
    await waitFor('the gateway', async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok, 60_000);
  });

  afterAll(async () => {
    gateway?.child.kill('SIGTERM');
    worker?.child.kill('SIGTERM');
    await Promise.all([gateway, worker].map((app) => app && exitOf(app.child)));
    await receiver?.stop();
    await own?.db.drop();
  });

  it('tells a person what flows, in one format, and never shows a credential', async () => {
    const admin = adminClient(url);
    const sub = await admin.subscribe({ url: `${receiver.url}/once`, token: subscriberToken, secret });
    const id = e2e.plantIds()();
    expect((await e2e.postPlant(url, { id, name: 'Logged' })).status).toBe(200);
    await waitFor('the delivery, after one failure', () => receiver.on('/once', id).length >= 2, 30_000);
    const text = () => gateway.output.join('') + worker.output.join('');
    await waitFor(
      'a flow line from each app',
      () => /accepted 1\b/.test(text()) && /delivered \d/.test(text()),
      15_000,
    );

    const lines = text()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    const entries = lines.map((l) => JSON.parse(l) as { level: string; msg: string; context?: string });
    expect(new Set(entries.map((e) => typeof e.level))).toEqual(new Set(['string']));
    expect(entries.find((e) => /^flow \ds: accepted 1 /.test(e.msg))?.level).toBe('info');
    expect(entries.find((e) => /^flow \ds: stored [\d,]+ /.test(e.msg))?.level).toBe('info');
    const failure = entries.find((e) => e.msg.includes(`delivery to subscription ${sub.id}`));
    expect(failure).toMatchObject({ level: 'warn' });
    expect(failure!.msg).toMatch(/failed: HTTP 500; attempt 1, next in \ds/);
    for (const e of entries.filter((x) => /^Mapped \{/.test(x.msg) || x.context === 'InstanceLoader'))
      expect(e.level).toBe('debug');
    for (const e of entries.filter((x) => /coordinator/i.test(x.msg))) expect(e.level).toBe('debug');

    const everything = text();
    for (const credential of [
      e2e.WEBHOOK_TOKEN,
      e2e.ADMIN_TOKEN,
      subscriberToken,
      secret,
      secret.slice('whsec_'.length),
      e2e.TEST_SECRETS_KEY,
    ])
      expect(everything).not.toContain(credential);
  });
});
