import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// Issue 28, the subscriber's replay: "the failed deliveries, or everything since a time". POST
// /subscriptions/{id}/recover?since=T re-sends the failed ones (the default, as before); with status=all every New
// Plant delivery whose event is at or after T, those that succeeded too, wherever they are kept: a row of the
// mutable table, or of the append-only delivery log (a delivery that succeeded at its first attempt). A real
// receiver checks what arrives: the same webhook-id, a plant's versions oldest first, nothing from before T.
describe('replay: failed deliveries, or everything since a time', () => {
  let db: e2e.ScratchDatabase;
  const sharedDatabaseUrl = process.env.DATABASE_URL;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const base = e2e.plantIds()();
  const admin = () => adminClient(gw.url);
  // Plants: `before` is delivered before T; after T: `once` succeeds at once (the log), `failing` fails for good
  // (a mutable row), `retried` succeeds at its second attempt (a mutable row that succeeded), `versions` is sent
  // twice (two versions: the first in the log, the second too unless it waited behind the first as a row), `moved` is the plant whose newer version the test makes go first.
  const before = base;
  const once = base + 1;
  const failing = base + 2;
  const retried = base + 3;
  const versions = base + 4;
  const moved = base + 5;
  let healthy = false;
  let a: { id: string };
  let b: { id: string };
  let since: string;

  const accept = async (plant: { id: number; name: string }) => {
    const res = await e2e.postPlant(gw.url, plant);
    expect(res.status).toBe(200);
    return ((await res.json()) as { eventId: string }).eventId;
  };
  const got = (id: number) => receiver.on('/a', id);
  const names = (id: number) => got(id).map((r) => JSON.parse(r.body).name as string);
  const recover = (sub: string, query: string, token?: string) =>
    adminClient(gw.url, token).call('POST', `/subscriptions/${sub}/recover?since=${encodeURIComponent(since)}${query}`);
  /** Where each of A's deliveries is kept: in the log (appended) or a row of deliveries, by plant. */
  const kept = async () =>
    (
      await db.pool.query<{ plant_id: string; status: string; appended: boolean; attempts: number }>(
        'SELECT plant_id, status, appended, attempts FROM all_deliveries WHERE subscription_id = $1 ORDER BY seq',
        [a.id],
      )
    ).rows.map((r) => ({ ...r, plant_id: Number(r.plant_id) }));

  /** Waits until A has `n` deliveries, none of them pending. */
  const answeredForGood = (n: number, what: string) =>
    waitFor(
      `${what} answered for good`,
      async () => {
        const rows = await kept();
        return rows.length === n && rows.every((r) => r.status !== 'pending');
      },
      30_000,
    );

  beforeAll(async () => {
    db = await e2e.scratchDatabase('replay');
    process.env.DATABASE_URL = db.url;
    await receiver.start();
    const env = e2e.baseEnv({
      DATABASE_URL: db.url,
      // Replayed deliveries are due after the statement timeout (no ingest statement outlives it): short here.
      DATABASE_STATEMENT_TIMEOUT_MS: '2000',
      DATABASE_QUERY_TIMEOUT_MS: '4000',
      DELIVERY_RETRY_SCHEDULE: '0s,300ms',
      DELIVERY_TIMEOUT_MS: '2000',
      DELIVERY_POLL_MS: '200',
      DELIVERY_CIRCUIT_FAILURES: '1000',
      // One request at a time per subscriber: the order they arrive in is the order they were sent in.
      DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '1',
    });
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    worker = await e2e.startWorker(env);
    gw = await e2e.startGateway(env);
    receiver.behave('/a', (r) => {
      const id = JSON.parse(r.body).id as number;
      if (id === failing && !healthy) return { status: 500 };
      if (id === retried && receiver.on('/a', retried).length === 1) return { status: 503 };
      return { status: 204 };
    });
    const filter = { plantIds: { min: base, max: base + 99 } };
    a = await admin().subscribe({ url: `${receiver.url}/a`, filter });
    b = await admin().subscribe({ url: `${receiver.url}/b`, filter });

    await accept({ id: before, name: 'Before' });
    await waitFor('the plant before T delivered', () => got(before).length === 1);
    await new Promise((r) => setTimeout(r, 50));
    since = new Date().toISOString();
    await accept({ id: once, name: 'Once' });
    await accept({ id: failing, name: 'Failing' });
    await accept({ id: retried, name: 'Retried' });
    // One request at a time per subscriber: version 1 is sent from memory (and so appended to the log) only when
    // nothing of A's is still in flight or waiting, so the failing and retried plants are answered for good first.
    await answeredForGood(4, 'the failing and retried plants');
    await accept({ id: versions, name: 'Version 1' });
    await waitFor('version 1 delivered', () => got(versions).length === 1);
    await accept({ id: versions, name: 'Version 2' });
    await accept({ id: moved, name: 'Moved 1' });
    await answeredForGood(7, 'every delivery since T');
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await worker?.close();
    await receiver.stop();
    await db?.drop();
    process.env.DATABASE_URL = sharedDatabaseUrl;
  });

  it('keeps deliveries that succeeded at once in the append-only log, the others as rows', async () => {
    const rows = await kept();
    const of = (id: number) => rows.filter((r) => r.plant_id === id);
    expect(of(once)).toEqual([{ plant_id: once, status: 'succeeded', appended: true, attempts: 1 }]);
    // Version 2 goes to the log too when version 1 was answered before it fanned out; else it waits as a row.
    expect(of(versions).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(of(versions)[0].appended).toBe(true);
    expect(of(failing)).toEqual([{ plant_id: failing, status: 'failed', appended: false, attempts: 2 }]);
    expect(of(retried)).toEqual([{ plant_id: retried, status: 'succeeded', appended: false, attempts: 2 }]);
  });

  it('refuses a portal link of another subscription with 403 problem+json, and changes nothing', async () => {
    const link = (await admin().call('POST', `/subscriptions/${b.id}/portal-links`, {})).body as { token: string };
    const res = await recover(a.id, '&status=all', link.token);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toMatch(new RegExp(`portal link is for subscription ${b.id}`));
    expect((await kept()).every((r) => r.status !== 'pending')).toBe(true);
  });

  it('runs one replay of a subscription at a time, and takes over a hold whose gateway died', async () => {
    // A replay running on another gateway holds B's row; a second replay meanwhile is refused before it reads.
    const now = () => encodeURIComponent(new Date().toISOString());
    const replayB = () => admin().call('POST', `/subscriptions/${b.id}/recover?since=${now()}&status=all`);
    await db.pool.query(
      `INSERT INTO subscription_replays (subscription_id, holder, until) VALUES ($1, gen_random_uuid(), now() + interval '1 minute')`,
      [b.id],
    );
    const refused = await replayB();
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ reason: 'replay-in-progress' });
    expect(refused.body.detail).toMatch(/one runs at a time.*retry after/i);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(5);
    // Its gateway died: the hold runs out, and the next replay takes it, then gives it back.
    await db.pool.query(
      `UPDATE subscription_replays SET until = now() - interval '1 second' WHERE subscription_id = $1`,
      [b.id],
    );
    const done = await replayB();
    expect(done.status).toBe(202);
    expect(done.body).toMatchObject({ requeued: 0, complete: true });
    const held = await db.pool.query('SELECT 1 FROM subscription_replays WHERE subscription_id = $1', [b.id]);
    expect(held.rowCount).toBe(0);
  });

  it('re-sends only the failed ones by default', async () => {
    healthy = true;
    const counts = [before, once, retried, versions, moved].map((id) => got(id).length);
    const res = await recover(a.id, '');
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ requeued: 1, status: 'failed', complete: true, cursor: null });
    await waitFor('the failed one delivered', () => got(failing).length === 3);
    await new Promise((r) => setTimeout(r, 1000));
    expect([before, once, retried, versions, moved].map((id) => got(id).length)).toEqual(counts);
  });

  it('re-sends every delivery since T with status=all, as the same message, oldest version first', async () => {
    const firstIds = new Map([once, failing, retried, moved].map((id) => [id, got(id)[0].headers['webhook-id']]));
    const sent = (id: number) => got(id).length;
    const counts = new Map([before, once, failing, retried, versions, moved].map((id) => [id, sent(id)]));
    const ownRows = await kept();
    const fromLog = ownRows.filter((r) => r.appended && r.plant_id !== before).length;
    // The portal link of the subscription itself may replay it.
    const link = (await admin().call('POST', `/subscriptions/${a.id}/portal-links`, {})).body as { token: string };
    const res = await recover(a.id, '&status=all', link.token);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ requeued: 6, status: 'all', complete: true, cursor: null });
    expect(res.body.lookedAt).toBeGreaterThanOrEqual(6);
    // It reads this subscription's rows alone (b has the same plants': a scan of everyone's read twice as many).
    expect(res.body.lookedAt).toBeLessThanOrEqual(ownRows.length);
    // Nothing goes before the wait: no ingest statement that began before the replay may still be running.
    expect(sent(once)).toBe(counts.get(once));

    await waitFor(
      'every delivery since T sent again',
      () => [once, failing, retried, moved].every((id) => sent(id) === counts.get(id)! + 1) && sent(versions) === 4,
      20_000,
    );
    for (const id of [once, failing, retried, moved])
      expect(got(id).at(-1)!.headers['webhook-id']).toBe(firstIds.get(id));
    expect(names(versions)).toEqual(['Version 1', 'Version 2', 'Version 1', 'Version 2']);
    const v = got(versions);
    expect(v[2].headers['webhook-id']).toBe(v[0].headers['webhook-id']);
    expect(v[3].headers['webhook-id']).toBe(v[1].headers['webhook-id']);
    await new Promise((r) => setTimeout(r, 1000));
    expect(sent(before)).toBe(counts.get(before)); // before T: not replayed

    // Each is one delivery still (the log's moved back with its id), with one more attempt, listed.
    await waitFor('all answered', async () => (await kept()).every((r) => r.status === 'succeeded'));
    const rows = await kept();
    expect(rows).toHaveLength(7);
    const onceRow = (await admin().deliveriesOf(a.id, `&plantId=${once}`))[0];
    const detail = (await admin().call('GET', `/deliveries/${onceRow.id}`)).body;
    expect(detail).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(detail.attemptLog).toHaveLength(2);

    const audit = (await admin().call('GET', `/audit?subscriptionId=${a.id}`)).body.items as {
      action: string;
      actor: string;
      details: Record<string, unknown>;
    }[];
    expect(audit.find((e) => e.action === 'subscription.recovered' && e.details.status === 'all')).toMatchObject({
      actor: expect.stringMatching(/^portal-link:/),
      details: { status: 'all', requeued: 6, fromLog, complete: true },
    });
  });

  it('leaves a replayed version unsent once a newer one of its plant reached the subscriber', async () => {
    const before2 = got(moved).length;
    const res = await recover(a.id, '&status=all');
    expect(res.body.requeued).toBe(6);
    // Within the wait, a newer version goes (as from an ingest statement that began before the replay): the plant
    // moves on and its delivery is answered. The replayed rows of that plant must then not go.
    await db.pool.query(`UPDATE plants SET last_event_id = 'newer-elsewhere' WHERE id = $1`, [moved]);
    await waitFor('the other replays sent', () => got(once).length === 3, 20_000);
    await waitFor('no replay left pending', async () => (await kept()).every((r) => r.status !== 'pending'));
    expect(got(moved).length).toBe(before2);
    const row = (await kept()).find((r) => r.plant_id === moved)!;
    expect(row).toMatchObject({ status: 'succeeded', appended: false, attempts: 2 });
  });

  it('answers 422 for a status it does not know', async () => {
    const res = await recover(a.id, '&status=some');
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('status');
  });
});
