import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import nacl from 'tweetnacl';
import { keyId } from '@app/persistence';
import * as e2e from '../../tools/harness/stack';
import { adminClient } from '../../tools/harness/admin';
import { Received, Receiver } from '../../tools/harness/receiver';
import { waitFor } from '../../tools/harness/wait';

// Credentials end to end, on a database of this suite's own (it rotates the key that seals them): secrets,
// private keys and tokens sealed at rest; symmetric and asymmetric signatures checked by the receiver with
// independent implementations; the key rotated under running deliveries; a wrong key refused; read and write
// admin scopes; the audit trail.

const KEY_1 = randomBytes(32).toString('base64');
const KEY_2 = randomBytes(32).toString('base64');
const WRITE = `ops-${randomBytes(12).toString('hex')}`;
const READ = `viewer-${randomBytes(12).toString('hex')}`;
const SUBSCRIBER_TOKEN = `subscriber-${randomBytes(16).toString('hex')}`;

/** Standard Webhooks `v1a,` checked with tweetnacl, an Ed25519 implementation that is not ours. */
function verifiesV1a(publicKey: string, r: Received): boolean {
  const h = r.headers;
  const content = Buffer.from(`${h['webhook-id']}.${h['webhook-timestamp']}.${r.body}`);
  const key = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  return String(h['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => nacl.sign.detached.verify(content, Buffer.from(s.slice(4), 'base64'), key));
}

const verifiesV1 = (secret: string, r: Received) => {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe('credentials', () => {
  let db: e2e.ScratchDatabase;
  let receiver: Receiver;
  let gateway: e2e.RunningGateway | null = null;
  let worker: e2e.RunningWorker | null = null;
  const nextId = e2e.plantIds();

  const env = (keys: { SECRETS_KEY: string; SECRETS_PREVIOUS_KEYS?: string }) =>
    e2e.baseEnv({
      DATABASE_URL: db.url,
      ADMIN_TOKENS: `ops:write:${WRITE},viewer:read:${READ}`,
      WORKER_GROUP_ID: `e2e-credentials-${randomBytes(3).toString('hex')}`,
      ...keys,
    });

  async function restart(keys: { SECRETS_KEY: string; SECRETS_PREVIOUS_KEYS?: string }) {
    await gateway?.close();
    await worker?.close();
    worker = await e2e.startWorker(env(keys)); // first: its setup migrates and (re)seals
    gateway = await e2e.startGateway(env(keys));
  }

  const admin = (token = WRITE) => adminClient(gateway!.url, token);
  const rawSubscriptions = async () => (await db.pool.query('SELECT * FROM subscriptions ORDER BY id')).rows;

  async function sendPlant(): Promise<number> {
    const id = nextId();
    const res = await e2e.postPlant(gateway!.url, { id, name: `Fern ${id}` });
    expect(res.status).toBe(200);
    return id;
  }
  const deliveredTo = (path: string, plantId: number) =>
    waitFor(`plant ${plantId} at ${path}`, () => receiver.on(path, plantId)[0], 30_000);

  let symmetric: { id: string; secret: string };
  let asymmetric: { id: string; publicKey: string };

  beforeAll(async () => {
    db = await e2e.scratchDatabase('credentials');
    receiver = new Receiver();
    await receiver.start();
    await restart({ SECRETS_KEY: KEY_1 });
    const s = await admin().call('POST', '/subscriptions', {
      url: `${receiver.url}/symmetric`,
      token: SUBSCRIBER_TOKEN,
    });
    const a = await admin().call('POST', '/subscriptions', {
      url: `${receiver.url}/asymmetric`,
      signature: 'asymmetric',
    });
    expect([s.status, a.status]).toEqual([201, 201]);
    symmetric = s.body;
    asymmetric = a.body;
  });

  afterAll(async () => {
    await gateway?.close();
    await worker?.close();
    await receiver?.stop();
    await db?.drop();
  });

  it('returns the secret of a symmetric subscription once, and only the public key of an asymmetric one', async () => {
    expect(symmetric.secret).toMatch(/^whsec_/);
    expect(asymmetric).toMatchObject({ signature: 'asymmetric', publicKey: expect.stringMatching(/^whpk_/) });
    expect(asymmetric).not.toHaveProperty('secret');
    const again = await admin(READ).call('GET', `/subscriptions/${asymmetric.id}`);
    expect(again.body.publicKey).toBe(asymmetric.publicKey); // on demand: it is public
    expect(JSON.stringify((await admin(READ).call('GET', '/subscriptions')).body)).not.toMatch(/whsec_|whsk_/);
  });

  it('stores no secret, private key or token in any form a reader of the table could use', async () => {
    const rows = await rawSubscriptions();
    const dump = JSON.stringify(rows);
    const secretBytes = symmetric.secret.slice('whsec_'.length);
    for (const leak of [
      symmetric.secret,
      secretBytes,
      Buffer.from(secretBytes, 'base64').toString('hex'),
      SUBSCRIBER_TOKEN,
    ])
      expect(dump).not.toContain(leak);
    expect(dump).not.toMatch(/whsec_|whsk_/);
    for (const row of rows) {
      expect(row.secret).toMatch(new RegExp(`^sealed:v1:${keyId(Buffer.from(KEY_1, 'base64'))}:`));
      if (row.token !== null) expect(row.token).toMatch(/^sealed:v1:/);
    }
  });

  it('signs v1 with the secret and v1a with the key pair; each verifies with an independent implementation', async () => {
    const plant = await sendPlant();
    const [s, a] = [await deliveredTo('/symmetric', plant), await deliveredTo('/asymmetric', plant)];
    expect(verifiesV1(symmetric.secret, s)).toBe(true);
    expect(s.headers.authorization).toBe(`Bearer ${SUBSCRIBER_TOKEN}`); // opened for the send, and only then
    expect(String(a.headers['webhook-signature'])).toMatch(/^v1a,/);
    expect(verifiesV1a(asymmetric.publicKey, a)).toBe(true);
  });

  it('rotates SECRETS_KEY: re-sealed at start-up, deliveries signed correctly before, during and after', async () => {
    await restart({ SECRETS_KEY: KEY_2, SECRETS_PREVIOUS_KEYS: KEY_1 });
    const k2 = keyId(Buffer.from(KEY_2, 'base64'));
    for (const row of await rawSubscriptions()) expect(row.secret).toMatch(new RegExp(`^sealed:v1:${k2}:`));
    const during = await sendPlant();
    expect(verifiesV1(symmetric.secret, await deliveredTo('/symmetric', during))).toBe(true);
    expect(verifiesV1a(asymmetric.publicKey, await deliveredTo('/asymmetric', during))).toBe(true);

    await restart({ SECRETS_KEY: KEY_2 }); // the old key retired
    const after = await sendPlant();
    expect(verifiesV1(symmetric.secret, await deliveredTo('/symmetric', after))).toBe(true);
    expect(verifiesV1a(asymmetric.publicKey, await deliveredTo('/asymmetric', after))).toBe(true);
  });

  it('seals, once, credentials stored in the clear before sealing existed, and keeps delivering with them', async () => {
    const legacySecret = `whsec_${randomBytes(32).toString('base64')}`;
    const { rows } = await db.pool.query(
      "INSERT INTO subscriptions (url, secret, token) VALUES ($1, $2, 'legacy-token-0123456789') RETURNING id",
      [`${receiver.url}/legacy`, legacySecret],
    );
    await restart({ SECRETS_KEY: KEY_2 }); // the set-up seals it
    const sealedOnce = (await db.pool.query('SELECT secret, token FROM subscriptions WHERE id = $1', [rows[0].id]))
      .rows[0];
    expect(sealedOnce.secret).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(sealedOnce)).not.toContain(legacySecret.slice(6));
    await restart({ SECRETS_KEY: KEY_2 }); // again: nothing to do, the same sealed values
    const sealedTwice = (await db.pool.query('SELECT secret, token FROM subscriptions WHERE id = $1', [rows[0].id]))
      .rows[0];
    expect(sealedTwice).toEqual(sealedOnce);
    const plant = await sendPlant();
    const delivered = await deliveredTo('/legacy', plant);
    expect(verifiesV1(legacySecret, delivered)).toBe(true);
    expect(delivered.headers.authorization).toBe('Bearer legacy-token-0123456789');
    await db.pool.query('DELETE FROM subscriptions WHERE id = $1', [rows[0].id]);
  });

  it('refuses to start with a key that does not open what is stored, naming both keys', async () => {
    const wrong = randomBytes(32).toString('base64');
    await expect(e2e.startWorker(env({ SECRETS_KEY: wrong }))).rejects.toThrow(
      new RegExp(
        `sealed with key ${keyId(Buffer.from(KEY_2, 'base64'))}, which is neither SECRETS_KEY \\(key ${keyId(Buffer.from(wrong, 'base64'))}\\)`,
      ),
    );
  });

  it('rotates an asymmetric key pair: both signatures sent during the overlap, each verifiable', async () => {
    const rotated = await admin().call('POST', `/subscriptions/${asymmetric.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.publicKey).toMatch(/^whpk_/);
    expect(rotated.body.publicKey).not.toBe(asymmetric.publicKey);
    expect(rotated.body.previousPublicKey).toBe(asymmetric.publicKey);
    expect(rotated.body).not.toHaveProperty('secret');
    const plant = await sendPlant();
    const delivered = await deliveredTo('/asymmetric', plant);
    expect(verifiesV1a(rotated.body.publicKey, delivered)).toBe(true);
    expect(verifiesV1a(asymmetric.publicKey, delivered)).toBe(true);
    asymmetric = rotated.body;
  });

  it('lets a read token list and inspect but not change, with a 403 that names the missing scope', async () => {
    expect((await admin(READ).call('GET', '/subscriptions')).status).toBe(200);
    expect((await admin(READ).call('GET', '/deliveries')).status).toBe(200);
    expect((await admin(READ).call('GET', '/audit')).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/subscriptions', { url: `${receiver.url}/never` }],
      ['PATCH', `/subscriptions/${symmetric.id}`, { enabled: false }],
      ['DELETE', `/subscriptions/${symmetric.id}`, undefined],
      ['POST', `/subscriptions/${symmetric.id}/rotate-secret`, undefined],
      ['POST', `/subscriptions/${symmetric.id}/recover?since=2026-01-01T00:00:00Z`, undefined],
    ] as const) {
      const res = await admin(READ).call(method, path, body);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({
        path,
        status: 403,
        type: expect.stringContaining('application/problem+json'),
      });
      expect(res.body.detail).toMatch(/needs an admin token with the "write" scope; "viewer" has "read"/);
    }
    expect((await admin(e2e.WEBHOOK_TOKEN).call('GET', '/subscriptions')).status).toBe(401);
    const doc = await (await fetch(`${gateway!.url}/openapi.json`)).json();
    expect(doc.paths['/subscriptions'].post.security).toEqual([{ adminAuth: ['write'] }]);
    expect(doc.paths['/subscriptions'].get.security).toEqual([{ adminAuth: ['read'] }]);
    expect(doc.paths['/subscriptions'].post.responses['403']).toBeDefined();
  });

  // Issue 25, item 8: an echoing receiver put the subscriber's own token into the response excerpt, which
  // GET /deliveries/{id} showed read tokens; a URL's query (credentials, often) went to read tokens and into
  // the permanent audit trail.
  it("shows a read token neither the subscriber's token echoed back nor the credentials in its URL", async () => {
    const querySecret = `q-${randomBytes(12).toString('hex')}`;
    const path = `/echo?api_key=${querySecret}&v=1`;
    receiver.behave(path, (r) => ({
      status: 200,
      body: JSON.stringify({ youSent: { url: r.path, headers: r.headers } }),
    }));
    const created = await admin().call('POST', '/subscriptions', {
      url: `${receiver.url}${path}`,
      token: SUBSCRIBER_TOKEN,
    });
    expect(created.status).toBe(201);
    const plant = await sendPlant();
    const echoed = await deliveredTo(path, plant);
    expect(echoed.headers.authorization).toBe(`Bearer ${SUBSCRIBER_TOKEN}`); // the receiver did see them

    // The receiver has the request before the worker has recorded it: the delivery may not be listed yet.
    const detail = await waitFor('the attempt recorded', async () => {
      const [delivery] = await admin(READ).deliveriesOf(created.body.id, `&plantId=${plant}`);
      if (!delivery) return null;
      const d = await admin(READ).call('GET', `/deliveries/${delivery.id}`);
      return d.body.attemptLog.length > 0 ? d.body : null;
    });
    const excerpt = detail.attemptLog[0].responseBody as string;
    expect(excerpt).toContain('"authorization":"[redacted]"');
    expect(excerpt).toContain('api_key=[redacted]');
    for (const shown of [
      JSON.stringify(detail),
      JSON.stringify((await db.pool.query('SELECT * FROM all_deliveries')).rows),
    ]) {
      expect(shown).not.toContain(SUBSCRIBER_TOKEN);
      expect(shown).not.toContain(querySecret);
    }

    const asRead = await admin(READ).call('GET', `/subscriptions/${created.body.id}`);
    expect(asRead.body.url).toBe(`${receiver.url}/echo?api_key=[redacted]&v=[redacted]`);
    expect(JSON.stringify((await admin(READ).call('GET', '/subscriptions')).body)).not.toContain(querySecret);
    expect((await admin().call('GET', `/subscriptions/${created.body.id}`)).body.url).toBe(`${receiver.url}${path}`);

    await admin().call('PATCH', `/subscriptions/${created.body.id}`, {
      url: `${receiver.url}/echo?api_key=${querySecret}2`,
    });
    expect((await admin().call('DELETE', `/subscriptions/${created.body.id}`)).status).toBe(204);
    const trail = (await admin(READ).call('GET', `/audit?subscriptionId=${created.body.id}`)).body.items;
    expect(trail.map((e: { details: { url?: string } }) => e.details.url)).toEqual([
      `${receiver.url}/echo`,
      `${receiver.url}/echo`,
      `${receiver.url}/echo`,
    ]);
    const stored = JSON.stringify((await db.pool.query('SELECT details FROM audit_events')).rows);
    expect(stored).not.toContain(querySecret);
  });

  it('records every change with who, when and what (never a secret), kept after a delete, paged and filtered', async () => {
    await admin().call('PATCH', `/subscriptions/${symmetric.id}`, { token: `new-${SUBSCRIBER_TOKEN}`, enabled: false });
    await admin().call('POST', `/subscriptions/${symmetric.id}/rotate-secret`);
    expect((await admin().call('DELETE', `/subscriptions/${symmetric.id}`)).status).toBe(204);

    const trail = (await admin(READ).call('GET', `/audit?subscriptionId=${symmetric.id}`)).body;
    expect(trail.items.map((e: { action: string }) => e.action)).toEqual([
      'subscription.deleted',
      'subscription.secret_rotated',
      'subscription.disabled',
      'subscription.created',
    ]);
    for (const e of trail.items) expect(e).toMatchObject({ actor: 'ops', subscriptionId: symmetric.id });
    expect(trail.items[2].details).toEqual({ changed: ['enabled', 'token'], token: 'replaced' });
    const everything = JSON.stringify((await admin(READ).call('GET', '/audit?limit=500')).body);
    expect(everything).not.toContain(SUBSCRIBER_TOKEN);
    expect(everything).not.toMatch(/whsec_|whsk_|sealed:/);
    expect(everything).not.toContain(WRITE);

    const first = (await admin(READ).call('GET', '/audit?limit=1')).body;
    expect(first.items).toHaveLength(1);
    const second = (await admin(READ).call('GET', `/audit?limit=1&cursor=${first.nextCursor}`)).body;
    expect(Number(second.items[0].id)).toBeLessThan(Number(first.items[0].id));
    const future = (await admin(READ).call('GET', '/audit?since=2999-01-01T00:00:00Z')).body;
    expect(future.items).toEqual([]);
  });
});
