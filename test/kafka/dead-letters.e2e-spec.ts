import { randomBytes } from 'node:crypto';
import { Consumer, KafkaMessage } from 'kafkajs';
import { PLANT_CREATED_TOPIC, RedriveHeaders } from '@app/contracts';
import { adminClient } from '../../tools/harness/admin';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

interface DeadLetter {
  id: string;
  status: string;
  reason: string;
  key: string | null;
  origin: { topic: string | null; partition: number | null; offset: string | null };
  changedBy: string | null;
  value?: string;
  headers?: Record<string, string>;
}

// A plant the store refused because of a bug (here: a schema constraint that should never have been there)
// becomes a dead letter; an operator sees why, fixes the bug, redrives it (once, however often it is clicked),
// and the plant is stored. Another is discarded. The state lives in PostgreSQL: a restarted gateway sees it.
describe('dead letters: list, show, redrive once, discard; a dead letter of a fixed bug stores once redriven', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  let env: NodeJS.ProcessEnv;
  let reader: Consumer;
  const republished: KafkaMessage[] = [];
  const nextId = e2e.plantIds();
  const admin = () => adminClient(gw.url);
  // This run's own: a new worker group also reads what earlier runs left on plant.created.
  const bugged = `Bugged ${randomBytes(4).toString('hex')}`;
  const addTheBug = () =>
    db.pool.query(`ALTER TABLE plants ADD CONSTRAINT the_bug CHECK (name NOT LIKE '${bugged}%') NOT VALID`);

  beforeAll(async () => {
    db = await e2e.scratchDatabase('deadletters');
    env = e2e.baseEnv({ DATABASE_URL: db.url });
    worker = await e2e.startWorker(env); // migrates the scratch database
    gw = await e2e.startGateway(env);
    // The bug: a constraint that refuses valid plants. The worker cannot store them and dead-letters them.
    await addTheBug();
    reader = await e2e.startReader(PLANT_CREATED_TOPIC, (m) => {
      if (m.headers?.[RedriveHeaders.from]) republished.push(m);
    });
  });

  afterAll(async () => {
    await reader?.disconnect();
    await worker?.close();
    await gw?.close();
    await db?.drop();
  });

  const deadLetterOf = (plantId: number) =>
    waitFor(`the dead letter of plant ${plantId}`, async () => {
      const res = await admin().call('GET', '/dead-letters?limit=500');
      expect(res.status).toBe(200);
      return (res.body.items as DeadLetter[]).find((d) => d.key === String(plantId)) ?? null;
    });
  const stored = async (id: number) =>
    (await db.pool.query('SELECT name FROM plants WHERE id = $1', [id])).rows[0]?.name ?? null;

  it('redrives a dead letter once the bug is fixed, publishing once however often it is asked', async () => {
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: `${bugged} fern`, tag: 'x' })).status).toBe(200);
    const letter = await deadLetterOf(id);
    expect(letter).toMatchObject({
      status: 'dead',
      reason: expect.stringMatching(/^unstorable: .*the_bug/),
      origin: { topic: PLANT_CREATED_TOPIC, partition: expect.any(Number), offset: expect.stringMatching(/^\d+$/) },
    });
    expect(await stored(id)).toBeNull();

    const shown = await admin().call('GET', `/dead-letters/${letter.id}`);
    expect(shown.status).toBe(200);
    expect(JSON.parse(shown.body.value)).toMatchObject({ type: 'plant.created', data: { id, name: `${bugged} fern` } });
    expect(shown.body.headers).toMatchObject({ ce_id: expect.any(String), traceparent: expect.any(String) });

    // Redriving before the fix only makes another dead letter; fix first.
    await db.pool.query('ALTER TABLE plants DROP CONSTRAINT the_bug');
    const [a, b] = await Promise.all([
      admin().call('POST', `/dead-letters/${letter.id}/redrive`),
      admin().call('POST', `/dead-letters/${letter.id}/redrive`),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const conflict = a.status === 409 ? a : b;
    expect(conflict.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(conflict.body.detail).toMatch(/is (redriving|redriven)/);

    await waitFor('the redriven plant stored', async () => ((await stored(id)) === `${bugged} fern` ? true : null));
    const again = await admin().call('POST', `/dead-letters/${letter.id}/redrive`);
    expect(again.status).toBe(409);
    await waitFor('the redriven record read back', () => republished.some((m) => m.key?.toString() === String(id)));
    await new Promise((r) => setTimeout(r, 1000)); // a second publish, if there were one, would show by now
    const mine = republished.filter((m) => m.key?.toString() === String(id));
    expect(mine).toHaveLength(1);
    expect(mine[0].headers?.[RedriveHeaders.from]?.toString()).toMatch(/^plant\.created\.dlq\[\d+\]@\d+$/);
    expect((await admin().call('GET', `/dead-letters/${letter.id}`)).body).toMatchObject({
      status: 'redriven',
      changedBy: expect.any(String),
    });
  });

  it('discards many at once, reports what it left, and keeps the state across a gateway restart', async () => {
    await addTheBug();
    try {
      const ids = [nextId(), nextId()];
      for (const id of ids) expect((await e2e.postPlant(gw.url, { id, name: `${bugged} palm` })).status).toBe(200);
      const letters = await Promise.all(ids.map(deadLetterOf));
      const res = await admin().call('POST', '/dead-letters/discard', {
        ids: [...letters.map((l) => l.id), '999999999'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        done: letters.map((l) => l.id),
        skipped: [{ id: '999999999', status: 'not_found' }],
      });
      const redriveDiscarded = await admin().call('POST', '/dead-letters/redrive', { ids: [letters[0].id] });
      expect(redriveDiscarded.body).toEqual({ done: [], skipped: [{ id: letters[0].id, status: 'discarded' }] });

      await gw.close();
      gw = await e2e.startGateway(env);
      const listed = await admin().call('GET', '/dead-letters?status=discarded&limit=500');
      expect((listed.body.items as DeadLetter[]).map((d) => d.id)).toEqual(
        expect.arrayContaining(letters.map((l) => l.id)),
      );
      const audit = await admin().call('GET', '/audit?limit=500');
      expect(audit.body.items.filter((e: { action: string }) => e.action === 'dead_letter.discarded')).toHaveLength(2);
    } finally {
      await db.pool.query('ALTER TABLE plants DROP CONSTRAINT IF EXISTS the_bug');
    }
  });

  it('refuses bad input with problem+json naming what to fix, and a webhook token is not an admin token', async () => {
    const bad = await admin().call('POST', '/dead-letters/redrive', { ids: [] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toMatch(/ids/);
    const badId = await admin().call('GET', '/dead-letters/abc');
    expect(badId.status).toBe(422);
    expect(badId.body.errors).toEqual([{ field: 'id', message: expect.any(String) }]);
    const missing = await admin().call('GET', '/dead-letters/987654321');
    expect(missing.status).toBe(404);
    const webhookToken = await adminClient(gw.url, e2e.WEBHOOK_TOKEN).call('GET', '/dead-letters');
    expect(webhookToken.status).toBe(401);
  });
});
