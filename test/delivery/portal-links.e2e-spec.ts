import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { UNKNOWN_PORTAL_TOKENS } from '../../apps/gateway/src/auth/unknown-portal-tokens';
import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// Portal links end to end (issue 28, §1), on a database of this suite's own (it reads every table for the
// token): a link is a subscriber's own credential for one subscription, made by an admin, shown once, stored
// as a digest, expiring and revocable; everything outside its subscription answers 403, served document and all.

const READ = `viewer-${randomBytes(12).toString('hex')}`;
/** PORTAL_LINK_CHANGES_BURST here; the rate is the default, 30 a minute (one change every 2 s). */
const BURST = 40;
/** PORTAL_LINK_REPLAYS_PER_DAY here: replays a subscription's links may start in 24 hours. */
const REPLAYS = 3;
/** PORTAL_LINK_REPLAY_INTERVAL here, seconds: one replay by a subscription's links in this long. */
const REPLAY_INTERVAL_S = 2;

interface Operation {
  path: string;
  method: string;
  security: Record<string, string[]>[];
}

describe('portal links', () => {
  let db: e2e.ScratchDatabase;
  const sharedDatabaseUrl = process.env.DATABASE_URL;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  const admin = () => adminClient(gw.url);
  const as = (token: string) => adminClient(gw.url, token);

  let a: { id: string };
  let b: { id: string };
  let link: { id: string; token: string; url: string; expiresAt: string };
  let aDelivery: string;
  let bDelivery: string;

  beforeAll(async () => {
    db = await e2e.scratchDatabase('portal');
    // The set-up startGateway runs (migrations, sealing) goes to this database too, not the shared one.
    process.env.DATABASE_URL = db.url;
    await receiver.start();
    const env = e2e.baseEnv({
      DATABASE_URL: db.url,
      DELIVERY_RETRY_SCHEDULE: '0s,200ms',
      ADMIN_TOKENS: `${e2e.ADMIN_TOKEN},viewer:read:${READ}`,
      // The suite's own link acts on every route it may call (~30 changes in all, a dozen within a second): the
      // change rate has a test of its own below, against this burst.
      PORTAL_LINK_CHANGES_BURST: String(BURST),
      PORTAL_LINK_REPLAYS_PER_DAY: String(REPLAYS),
      PORTAL_LINK_REPLAY_INTERVAL: `${REPLAY_INTERVAL_S}s`,
    });
    worker = await e2e.startWorker(env);
    gw = await e2e.startGateway(env);
    receiver.behave('/a', () => ({ status: 500 }));
    // Only this suite's plants (the topic is shared with other suites).
    const plant = nextId();
    const filter = { plantIds: { min: plant, max: plant + 999 } };
    a = await admin().subscribe({ url: `${receiver.url}/a`, filter });
    b = await admin().subscribe({ url: `${receiver.url}/b`, filter });
    expect((await e2e.postPlant(gw.url, { id: plant, name: 'Portal fern' })).status).toBe(200);
    [aDelivery, bDelivery] = await Promise.all(
      [a.id, b.id].map((id, i) =>
        waitFor(`the delivery to ${'ab'[i]} done`, async () => {
          const [d] = await admin().deliveriesOf(id);
          return d && d.status !== 'pending' ? d.id : null;
        }),
      ),
    );
  });

  afterAll(async () => {
    await gw?.close();
    await worker?.close();
    await receiver.stop();
    await db?.drop();
    process.env.DATABASE_URL = sharedDatabaseUrl;
  });

  it('is made by a write admin token, shown once, listed without its token, and audited', async () => {
    const before = Date.now();
    const created = await admin().call('POST', `/subscriptions/${a.id}/portal-links`, { description: 'for A' });
    expect(created.status).toBe(201);
    link = created.body;
    expect(link.token).toMatch(/^psp_[A-Za-z0-9_-]{43}$/);
    // The token rides in the fragment, which no browser sends to a server.
    expect(link.url).toBe(`${gw.url}/console/portal#token=${link.token}`);
    const lifetime = Date.parse(link.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(7 * 86_400_000 - 60_000); // the default: 7 days
    expect(lifetime).toBeLessThan(7 * 86_400_000 + 60_000);

    const listed = await admin().call('GET', `/subscriptions/${a.id}/portal-links`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ id: link.id, state: 'active', description: 'for A', createdBy: expect.any(String) }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(link.token);

    for (const lifetimeSeconds of [59, 30 * 86_400 + 1]) {
      const bad = await admin().call('POST', `/subscriptions/${a.id}/portal-links`, { lifetimeSeconds });
      expect({ lifetimeSeconds, status: bad.status }).toEqual({ lifetimeSeconds, status: 422 });
    }
    const missing = await admin().call('POST', '/subscriptions/00000000-0000-4000-8000-000000000000/portal-links');
    expect(missing.status).toBe(404);
    const audit = await admin().call('GET', `/audit?subscriptionId=${a.id}`);
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ action: 'portal_link.created', details: expect.objectContaining({ linkId: link.id }) }),
    );
    expect(JSON.stringify(audit.body)).not.toContain(link.token);
  });

  it('stores the token as a digest only: its text is in no table', async () => {
    const { rows: tables } = await db.pool.query<{ t: string }>(
      "SELECT quote_ident(table_name) AS t FROM information_schema.tables WHERE table_schema = 'public'",
    );
    const secret = link.token.slice('psp_'.length);
    for (const { t } of tables) {
      const { rows } = await db.pool.query(`SELECT row_to_json(x)::text AS j FROM ${t} x`);
      const dump = rows.map((r) => r.j).join('\n');
      expect({ table: t, leaks: dump.includes(secret) }).toEqual({ table: t, leaks: false });
    }
    const { rows } = await db.pool.query('SELECT token_digest FROM portal_links WHERE id = $1', [link.id]);
    expect(rows[0].token_digest).toEqual(createHash('sha256').update(link.token).digest());
  });

  it('reads its own subscription and deliveries, every attempt and what was sent, and acts on them', async () => {
    const portal = as(link.token);
    expect((await portal.call('GET', '/portal/session')).body).toEqual({
      subscriptionId: a.id,
      linkId: link.id,
      expiresAt: link.expiresAt,
    });
    expect((await portal.call('GET', `/subscriptions/${a.id}`)).body).toMatchObject({
      id: a.id,
      url: `${receiver.url}/a`,
    });
    // Its deliveries, without naming the subscription, or naming it.
    for (const query of ['', `?subscriptionId=${a.id}`]) {
      const listed = await portal.call('GET', `/deliveries${query}`);
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((d: { id: string }) => d.id)).toEqual([aDelivery]);
    }
    const detail = await portal.call('GET', `/deliveries/${aDelivery}`);
    expect(detail.status).toBe(200);
    expect(detail.body.attemptLog).toHaveLength(2);
    expect(detail.body.request.body).toContain('Portal fern');
    expect(detail.body.request.headers['webhook-signature']).toMatch(/^v1,/);

    // Acts: describe, disable and enable, test, rotate the secret (shown once), retry and recover.
    expect((await portal.call('PATCH', `/subscriptions/${a.id}`, { description: 'mine' })).status).toBe(200);
    // Its limits and its custom headers, in one change and then apart: each kept, neither clears the other.
    const limited = await portal.call('PATCH', `/subscriptions/${a.id}`, {
      maxDeliveriesPerSecond: 50,
      maxConcurrency: 4,
      headers: { 'X-Team': 'plants' },
      secretHeaders: { 'X-Api-Key': 'portal-key' },
    });
    expect(limited.status).toBe(200);
    expect(limited.body).toMatchObject({
      maxDeliveriesPerSecond: 50,
      maxConcurrency: 4,
      headers: { 'X-Team': 'plants' },
      secretHeaderNames: ['X-Api-Key'],
    });
    expect((await portal.call('PATCH', `/subscriptions/${a.id}`, { maxConcurrency: null })).body).toMatchObject({
      maxDeliveriesPerSecond: 50,
      maxConcurrency: null,
      headers: { 'X-Team': 'plants' },
      secretHeaderNames: ['X-Api-Key'],
    });
    expect((await portal.call('PATCH', `/subscriptions/${a.id}`, { headers: { 'X-Team': null } })).body).toMatchObject({
      maxDeliveriesPerSecond: 50,
      headers: {},
      secretHeaderNames: ['X-Api-Key'],
    });
    expect((await portal.call('PATCH', `/subscriptions/${a.id}`, { enabled: false })).body.enabled).toBe(false);
    expect((await portal.call('PATCH', `/subscriptions/${a.id}`, { enabled: true })).body.enabled).toBe(true);
    const filter = await portal.call('PATCH', `/subscriptions/${a.id}`, { filter: { tags: ['x'] } });
    expect(filter.status).toBe(403);
    expect(filter.body.detail).toMatch(/^filter: .*set by the Plant Store operator/);
    receiver.behave('/a', () => ({ status: 204 }));
    expect((await portal.call('POST', `/subscriptions/${a.id}/test`)).body.succeeded).toBe(true);
    const rotated = await portal.call('POST', `/subscriptions/${a.id}/rotate-secret`);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect((await portal.call('POST', `/deliveries/${aDelivery}/retry`)).status).toBe(202);
    await waitFor('the retry delivered', async () => (await admin().deliveriesOf(a.id))[0].status === 'succeeded');
    const since = new Date(Date.now() - 3_600_000).toISOString();
    expect((await portal.call('POST', `/subscriptions/${a.id}/recover?since=${since}`)).body).toEqual({
      requeued: 0,
      status: 'failed',
      complete: true,
      cursor: null,
    });
    expect((await portal.call('POST', '/deliveries/retry', { since })).body).toEqual({ requeued: 0 });

    // What it did is audited under the link's name, never its token.
    const audit = await admin().call('GET', `/audit?subscriptionId=${a.id}`);
    const byLink = audit.body.items.filter((e: { actor: string }) => e.actor === `portal-link:${link.id}`);
    expect(byLink.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(['subscription.changed', 'subscription.secret_rotated', 'delivery.retried']),
    );
  });

  // Issue 36 (c): what a portal link may change is what the operator allowed.
  it('cannot enable a subscription the operator disabled, and enables one it or Plant Store disabled', async () => {
    const portal = as(link.token);
    const patch = (client: ReturnType<typeof as>, body: object) => client.call('PATCH', `/subscriptions/${a.id}`, body);
    expect((await patch(admin(), { enabled: false })).body.enabled).toBe(false);
    // The link's own disable on top of the operator's does not make the disable the link's.
    expect((await patch(portal, { enabled: false })).status).toBe(200);
    for (const body of [{ enabled: true }, { enabled: true, description: 'back on' }]) {
      const refused = await patch(portal, body);
      expect({ status: refused.status, type: refused.headers.get('content-type') }).toEqual({
        status: 409,
        type: expect.stringContaining('application/problem+json'),
      });
      expect(refused.body.detail).toMatch(
        new RegExp(`^Subscription ${a.id} was disabled by the Plant Store operator .*Ask the operator to enable it`),
      );
      expect(refused.body.errors).toEqual([{ field: 'enabled', message: expect.any(String) }]);
    }
    // Nothing of a refused change was made; its other settings are still the link's to change.
    expect((await admin().call('GET', `/subscriptions/${a.id}`)).body).toMatchObject({
      enabled: false,
      disabledReason: 'disabled by an admin',
      description: 'mine',
    });
    expect((await patch(portal, { description: 'while off' })).body).toMatchObject({ enabled: false });

    // Once the operator enables it, the link disables and enables it again.
    expect((await patch(admin(), { enabled: true })).body.enabled).toBe(true);
    expect((await patch(portal, { enabled: false })).body).toMatchObject({
      enabled: false,
      disabledReason: 'disabled through its portal link',
    });
    expect((await patch(portal, { enabled: true })).body.enabled).toBe(true);
    // Disabled by Plant Store (as a 410 does: the worker's statement leaves the operator's mark unset): its to fix.
    await db.pool.query(
      "UPDATE subscriptions SET enabled = false, disabled_reason = 'the receiver answered 410 Gone' WHERE id = $1",
      [a.id],
    );
    expect((await patch(portal, { enabled: true })).body.enabled).toBe(true);
  });

  // Issue 36 (b): a portal link may change the URL, and then the test send carried the operator's secret header
  // to the host the link's holder chose.
  it("sends the operator's secret headers and token nowhere a portal link moves the subscription", async () => {
    const OPERATOR_KEY = 'sk_operator_5f4e3d2c1b0a9988';
    const OPERATOR_TOKEN = 'operator-token-0123456789abcdef';
    const plant = nextId();
    const c = await admin().subscribe({
      url: `${receiver.url}/operator`,
      token: OPERATOR_TOKEN,
      headers: { 'X-Team': 'plants' },
      secretHeaders: { 'X-Api-Key': OPERATOR_KEY },
      filter: { plantIds: { min: plant, max: plant } },
    });
    const own = (await admin().call('POST', `/subscriptions/${c.id}/portal-links`, {})).body as { token: string };
    const portal = as(own.token);
    const patch = (body: object) => portal.call('PATCH', `/subscriptions/${c.id}`, body);
    // The URL sent back as it is (the portal page does with every save): nothing stays behind.
    expect((await patch({ url: `${receiver.url}/operator`, description: 'same' })).body).toMatchObject({
      hasToken: true,
      secretHeaderNames: ['X-Api-Key'],
    });

    const moved = await patch({ url: `${receiver.url}/holder` });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      url: `${receiver.url}/holder`,
      hasToken: false,
      secretHeaderNames: [],
      headers: { 'X-Team': 'plants' }, // plain ones go on: the link shows them anyway
    });
    expect((await portal.call('POST', `/subscriptions/${c.id}/test`)).body.succeeded).toBe(true);
    expect((await e2e.postPlant(gw.url, { id: plant, name: 'Moved fern' })).status).toBe(200);
    await waitFor('the delivery to the new URL', () => receiver.on('/holder', plant)[0]);
    const atHolder = receiver.on('/holder');
    expect(atHolder).toHaveLength(2); // the test and the delivery
    for (const got of atHolder) {
      expect(got.headers['x-team']).toBe('plants');
      expect(got.headers['x-api-key']).toBeUndefined();
      expect(got.headers.authorization).toBeUndefined();
      expect(JSON.stringify(got)).not.toMatch(new RegExp(`${OPERATOR_KEY}|${OPERATOR_TOKEN}`));
    }
    const audit = await admin().call('GET', `/audit?subscriptionId=${c.id}`);
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({
        actor: expect.stringMatching(/^portal-link:/),
        details: expect.objectContaining({ leftBehindWithTheOldUrl: { token: true, secretHeaders: ['X-Api-Key'] } }),
      }),
    );
    expect(JSON.stringify(audit.body)).not.toContain(OPERATOR_KEY);

    // What the same change sets, the holder gave: it goes with the new URL.
    const own2 = await patch({
      url: `${receiver.url}/holder2`,
      token: 'holders-own-token-0123',
      secretHeaders: { 'X-Holder-Key': 'holders-own-key' },
    });
    expect(own2.body).toMatchObject({ hasToken: true, secretHeaderNames: ['X-Holder-Key'] });
    // The operator's own change of the URL keeps them: its credentials, its choice.
    await admin().call('PATCH', `/subscriptions/${c.id}`, { secretHeaders: { 'X-Api-Key': OPERATOR_KEY } });
    const byOperator = await admin().call('PATCH', `/subscriptions/${c.id}`, { url: `${receiver.url}/operator` });
    expect(byOperator.body).toMatchObject({ hasToken: true, secretHeaderNames: ['X-Api-Key', 'X-Holder-Key'] });
    expect((await admin().call('DELETE', `/subscriptions/${c.id}`)).status).toBe(204);
  });

  // Issue 36 (c): an operational subscription receives Plant Store's own events, which are the operator's.
  it('is not made for an operational subscription, and one made before opens nothing', async () => {
    const ops = await admin().subscribe({ url: `${receiver.url}/ops`, kind: 'operational' });
    const refused = await admin().call('POST', `/subscriptions/${ops.id}/portal-links`, { description: 'for ops' });
    expect({ status: refused.status, type: refused.headers.get('content-type') }).toEqual({
      status: 409,
      type: expect.stringContaining('application/problem+json'),
    });
    expect(refused.body.detail).toMatch(/is operational: .*Manage it with an admin token/);
    expect((await admin().call('GET', `/subscriptions/${ops.id}/portal-links`)).body).toEqual([]);
    // One made before the rule, as the gateway wrote it then.
    const token = `psp_${randomBytes(32).toString('base64url')}`;
    await db.pool.query(
      `INSERT INTO portal_links (subscription_id, token_digest, created_by, expires_at)
       VALUES ($1, $2, 'before', now() + interval '1 day')`,
      [ops.id, createHash('sha256').update(token).digest()],
    );
    for (const path of ['/portal/session', `/subscriptions/${ops.id}`, `/deliveries?subscriptionId=${ops.id}`]) {
      const res = await as(token).call('GET', path);
      expect({ path, status: res.status, reason: res.body.reason }).toEqual({
        path,
        status: 401,
        reason: 'operational',
      });
      expect(res.body.detail).toMatch(/operational subscription.*Ask the Plant Store operator/);
    }
    expect((await admin().call('DELETE', `/subscriptions/${ops.id}`)).status).toBe(204);
  });

  it("answers 403 on another subscriber's subscription and deliveries", async () => {
    const portal = as(link.token);
    for (const [method, path, body] of [
      ['GET', `/subscriptions/${b.id}`],
      ['PATCH', `/subscriptions/${b.id}`, { enabled: false }],
      ['GET', `/deliveries?subscriptionId=${b.id}`],
      ['GET', `/deliveries/${bDelivery}`],
      ['POST', `/deliveries/${bDelivery}/retry`],
      ['POST', '/deliveries/retry', { subscriptionId: b.id }],
      ['POST', `/subscriptions/${b.id}/rotate-secret`],
    ] as const) {
      const res = await portal.call(method, path, body);
      expect({ method, path, status: res.status, type: res.headers.get('content-type') }).toEqual({
        method,
        path,
        status: 403,
        type: expect.stringContaining('application/problem+json'),
      });
      expect(res.body.detail).toMatch(new RegExp(`This portal link is for subscription ${a.id}: .*another subscriber`));
    }
    expect((await admin().call('GET', `/subscriptions/${b.id}`)).body.enabled).toBe(true);
  });

  // Every operation of the served document, so that a route added later is covered: with the link's own ids,
  // those whose security lists portalAuth are reachable and every other answers 403 saying what to do; with
  // another subscriber's ids, all of them answer 403.
  it('answers 403, problem+json, on every operation the document does not open to it', async () => {
    const doc = await (await fetch(`${gw.url}/openapi.json`)).json();
    const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(
      ([path, item]) =>
        Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), security: op.security })),
    );
    expect(operations.length).toBeGreaterThan(20);
    const opened = (op: Operation) => op.security.some((s) => 'portalAuth' in s);
    const concrete = (op: Operation, own: boolean) =>
      op.path
        .replace('/subscriptions/{id}', `/subscriptions/${own ? a.id : b.id}`)
        .replace('/deliveries/{id}', `/deliveries/${own ? aDelivery : bDelivery}`)
        .replace('{linkId}', link.id)
        .replace('/plants/{id}', '/plants/1')
        .replace('/dead-letters/{id}', '/dead-letters/1');
    const outcomes: string[] = [];
    for (const op of operations) {
      for (const own of [true, false]) {
        if (op.path === '/portal/session' && !own) continue;
        // Another subscriber's: by the path's id, or (a path without one) by a subscriptionId in query and body.
        const foreign = !own && !op.path.includes('{');
        const path = `${concrete(op, own)}${foreign ? `?subscriptionId=${b.id}` : ''}`;
        const body =
          op.method === 'PATCH'
            ? { description: 'scope check' }
            : op.method === 'POST'
              ? foreign
                ? { subscriptionId: b.id }
                : {}
              : undefined;
        const res = await as(link.token).call(op.method, path, body);
        const expected = own && opened(op) ? 'reachable' : 403;
        const got = res.status === 403 || res.status === 401 ? res.status : 'reachable';
        outcomes.push(
          `${op.method} ${op.path} ${own ? 'own' : "another's"}: ${got === expected ? 'ok' : `got ${res.status}`}`,
        );
        if (res.status === 403) {
          expect(res.headers.get('content-type')).toContain('application/problem+json');
          expect(res.body.detail).toMatch(/portal link.*(ADMIN_TOKENS|operator)/);
        }
      }
    }
    expect(outcomes.filter((o) => !o.endsWith(': ok'))).toEqual([]);
    // Its own routes are its alone: an admin token is told what the route wants.
    const asAdmin = await admin().call('GET', '/portal/session');
    expect(asAdmin.status).toBe(401);
    expect(asAdmin.body.detail).toMatch(/not a portal link's token/);
  });

  it('is refused before the body is read: the refusal comes while the body is still unsent', async () => {
    const u = new URL(gw.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const s = net.connect(Number(u.port), u.hostname, () =>
        s.write(
          `POST /dead-letters/redrive HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${link.token}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
        ),
      );
      let text = '';
      s.on('data', (c) => (text += c))
        .on('end', () => resolve(text))
        .on('error', reject);
      setTimeout(() => resolve(text), 5_000);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 403/);
    expect(answer).toMatch(/connection: close/i);
  });

  it('refuses an expired link, a revoked one and one whose subscription was deleted, with 401 saying which', async () => {
    const make = async (subscriptionId: string) =>
      (await admin().call('POST', `/subscriptions/${subscriptionId}/portal-links`, { lifetimeSeconds: 60 })).body as {
        id: string;
        token: string;
      };
    const expired = await make(a.id);
    expect((await as(expired.token).call('GET', `/subscriptions/${a.id}`)).status).toBe(200);
    await db.pool.query("UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    const revoked = await make(a.id);
    const revoke = await admin().call('DELETE', `/subscriptions/${a.id}/portal-links/${revoked.id}`);
    expect(revoke.body).toMatchObject({ id: revoked.id, state: 'revoked', revokedAt: expect.any(String) });
    expect((await as(e2e.ADMIN_TOKEN).call('DELETE', `/subscriptions/${b.id}/portal-links/${revoked.id}`)).status).toBe(
      404,
    );
    const c = await admin().subscribe({ url: `${receiver.url}/c` });
    const orphaned = await make(c.id);
    expect((await admin().call('DELETE', `/subscriptions/${c.id}`)).status).toBe(204);

    for (const [token, reason, detail] of [
      [expired.token, 'expired', /^This portal link expired on \d{4}-.*Ask the Plant Store operator/],
      [revoked.token, 'revoked', /^This portal link was revoked on \d{4}-.*Ask the Plant Store operator/],
      [orphaned.token, 'deleted', /^The subscription this portal link opened was deleted/],
    ] as const) {
      for (const path of ['/portal/session', `/subscriptions/${a.id}`, '/plants']) {
        const res = await as(token).call('GET', path);
        expect({ reason, path, status: res.status, type: res.headers.get('content-type') }).toEqual({
          reason,
          path,
          status: 401,
          type: expect.stringContaining('application/problem+json'),
        });
        expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
        expect(res.body).toMatchObject({ reason, detail: expect.stringMatching(detail) });
      }
    }
    const listed = (await admin().call('GET', `/subscriptions/${a.id}/portal-links`)).body as {
      id: string;
      state: string;
    }[];
    expect(Object.fromEntries(listed.map((l) => [l.id, l.state]))).toMatchObject({
      [link.id]: 'active',
      [expired.id]: 'expired',
      [revoked.id]: 'revoked',
    });
    const audit = await admin().call('GET', `/audit?subscriptionId=${a.id}`);
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ action: 'portal_link.revoked', details: { linkId: revoked.id } }),
    );
    // A wrong token that looks like one is just unknown.
    const unknown = await as(`psp_${'A'.repeat(43)}`).call('GET', `/subscriptions/${a.id}`);
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toMatch(/not an admin token.*or a portal link's token/);
  });

  it('is made, listed and revoked from the CLI', async () => {
    const cli = (...args: string[]) =>
      new Promise<{ code: number; stdout: string }>((resolve) =>
        execFile(
          process.execPath,
          [path.resolve(__dirname, '../../cli/plant-store.js'), 'subscriptions', 'portal-link', ...args],
          { env: { PATH: process.env.PATH, PLANT_STORE_URL: gw.url, PLANT_STORE_ADMIN_TOKEN: e2e.ADMIN_TOKEN } },
          (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
        ),
      );
    const made = await cli('create', b.id, '--lifetime', '2h', '--description', 'for B', '--json');
    expect(made.code).toBe(0);
    const created = JSON.parse(made.stdout);
    expect(created).toMatchObject({ token: expect.stringMatching(/^psp_/), description: 'for B', state: 'active' });
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect((await as(created.token).call('GET', `/subscriptions/${b.id}`)).status).toBe(200);
    const listed = await cli('list', b.id);
    expect(listed.stdout).toMatch(new RegExp(`${created.id}\\s+active`));
    expect(listed.stdout).not.toContain(created.token);
    expect((await cli('revoke', b.id, created.id)).code).toBe(0);
    expect((await as(created.token).call('GET', `/subscriptions/${b.id}`)).status).toBe(401);
    expect((await cli('create', b.id, '--lifetime', 'forever')).code).toBe(2);
  });

  // Issue 36, finding 5 ("cache invalidation at will"): 300 alternating PATCHes from one portal link in 1.6 s, all
  // 200, each making every worker reload every subscription. Replayed: the link gets its burst and then 429, while
  // the operator's change and another link's still go through.
  it("bounds a link's changes: past its rate 429 with Retry-After; admins and other links go on", async () => {
    const noisy = await admin().subscribe({ url: `${receiver.url}/noisy`, filter: { tags: ['portal-rate-noisy'] } });
    const calm = await admin().subscribe({ url: `${receiver.url}/calm`, filter: { tags: ['portal-rate-calm'] } });
    const linkOf = async (id: string) =>
      as((await admin().call('POST', `/subscriptions/${id}/portal-links`, {})).body.token as string);
    const [attacker, neighbour] = [await linkOf(noisy.id), await linkOf(calm.id)];

    // The attack, as fast as one client goes.
    const started = Date.now();
    const answers: { status: number; type: string | null; retryAfter: string | null; reason?: string }[] = [];
    let detail = '';
    for (let i = 0; i < 300; i++) {
      const { status, headers, body } = await attacker.call('PATCH', `/subscriptions/${noisy.id}`, {
        description: `flip ${i % 2}`,
      });
      const [type, retryAfter] = [headers.get('content-type'), headers.get('retry-after')];
      answers.push({ status, type, retryAfter, reason: body?.reason });
      if (status === 429) detail = body.detail;
    }
    const seconds = (Date.now() - started) / 1000;
    const made = answers.filter((a) => a.status === 200).length;
    expect(made).toBeGreaterThanOrEqual(BURST);
    expect(made).toBeLessThanOrEqual(BURST + Math.ceil(seconds / 2) + 1); // the burst, then one every 2 s
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(300 - made);
    for (const r of refused)
      expect(r).toMatchObject({
        status: 429,
        type: expect.stringContaining('application/problem+json'),
        retryAfter: expect.stringMatching(/^[12]$/),
        reason: 'portal-link-change-rate',
      });
    expect(detail).toMatch(/^This portal link has made its changes for now .*Retry in [12] s \(Retry-After\)/);

    // A refusal past the rate keeps its connection (a small body is read and dropped): a client that loops on it
    // is not a new TCP connection per call. A large or unsent body is still never read: that one closes.
    const u = new URL(gw.url);
    const patch = (length: number, body: string) =>
      `PATCH /subscriptions/${noisy.id} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${attacker.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${body}`;
    const small = JSON.stringify({ description: 'one more' });
    const kept = await new Promise<string>((resolve, reject) => {
      let text = '';
      const s = net.connect(Number(u.port), u.hostname, () => s.write(patch(small.length, small)));
      s.on('data', (c) => {
        text += c;
        if (text.split('HTTP/1.1 ').length === 2 && text.includes('"portal-link-change-rate"')) {
          s.write(`GET /healthz HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`); // the same connection, once more
        } else if (text.split('HTTP/1.1 ').length === 3) s.end();
      })
        .on('end', () => resolve(text))
        .on('error', reject);
      setTimeout(() => (s.destroy(), resolve(text)), 5_000);
    });
    const [first, second] = kept.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 429/);
    expect(first).not.toMatch(/connection: close/i);
    expect(second).toMatch(/^HTTP\/1\.1 200/);
    const closed = await new Promise<string>((resolve, reject) => {
      let text = '';
      const s = net.connect(Number(u.port), u.hostname, () => s.write(patch(100_000, '{')));
      s.on('data', (c) => (text += c))
        .on('end', () => resolve(text))
        .on('error', reject);
      setTimeout(() => (s.destroy(), resolve(text)), 5_000);
    });
    expect(closed).toMatch(/^HTTP\/1\.1 429/);
    expect(closed).toMatch(/connection: close/i);

    // The victims' view: the operator is not limited, another link has its own share, and reading goes on.
    const byAdmin = await admin().call('PATCH', `/subscriptions/${noisy.id}`, { description: 'set by the operator' });
    expect(byAdmin.status).toBe(200);
    expect((await neighbour.call('PATCH', `/subscriptions/${calm.id}`, { description: 'mine' })).status).toBe(200);
    expect((await attacker.call('GET', `/subscriptions/${noisy.id}`)).body.description).toBe('set by the operator');
    // Nothing of a refused change was made: the audit trail has the changes that got 200, no more.
    const audit = await admin().call('GET', `/audit?subscriptionId=${noisy.id}&limit=500`);
    const byLink = audit.body.items.filter(
      (e: { actor: string; action: string }) =>
        e.actor.startsWith('portal-link:') && e.action === 'subscription.changed',
    );
    expect(byLink).toHaveLength(made);
    for (const id of [noisy.id, calm.id])
      expect((await admin().call('DELETE', `/subscriptions/${id}`)).status).toBe(204);
  });

  // Issue #36, finding 1: twelve replays from one link, all accepted, sent one delivery thirteen times.
  it("bounds a subscription's replays by its links to a daily budget; the operator's are not counted", async () => {
    const replayed = await admin().subscribe({ url: `${receiver.url}/replayed`, filter: { tags: ['portal-replays'] } });
    const linkOf = async () =>
      as((await admin().call('POST', `/subscriptions/${replayed.id}/portal-links`, {})).body.token as string);
    // Two links of one subscription share its budget: a second link is no second budget.
    const [first, second] = [await linkOf(), await linkOf()];
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const replay = (by: ReturnType<typeof as>) =>
      by.call('POST', `/subscriptions/${replayed.id}/recover?since=${since}&status=all`);
    const answers = [];
    for (const by of [first, second, first, second, first]) {
      answers.push(await replay(by));
      if (answers.length >= REPLAYS) continue;
      // Paced as well: one replay per PORTAL_LINK_REPLAY_INTERVAL, by any of its links.
      const paced = await replay(by === first ? second : first);
      expect(paced.status).toBe(429);
      expect(paced.body).toMatchObject({ reason: 'portal-link-replay-rate' });
      expect(Number(paced.headers.get('retry-after'))).toBeLessThanOrEqual(REPLAY_INTERVAL_S);
      await new Promise((r) => setTimeout(r, REPLAY_INTERVAL_S * 1000 + 100));
    }
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 429, 429]);
    const refused = answers[3];
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(86_000); // the oldest leaves in ~24 h
    expect(refused.body).toMatchObject({ status: 429, reason: 'portal-link-replay-budget' });
    expect(refused.body.detail).toMatch(/started 3 replays in the last 24 hours.*PORTAL_LINK_REPLAYS_PER_DAY, 3/);
    // The operator still replays; the audit trail holds the replays that were made, not the refused ones.
    expect((await admin().call('POST', `/subscriptions/${replayed.id}/recover?since=${since}&status=all`)).status).toBe(
      202,
    );
    const audit = await admin().call('GET', `/audit?subscriptionId=${replayed.id}&limit=50`);
    const recovered = audit.body.items.filter((e: { action: string }) => e.action === 'subscription.recovered');
    const byLinks = recovered.filter((e: { actor: string }) => e.actor.startsWith('portal-link:'));
    expect([recovered.length, byLinks.length]).toEqual([4, 3]);
    expect((await admin().call('DELETE', `/subscriptions/${replayed.id}`)).status).toBe(204);
  });

  it('lets a read admin token list links but not make or revoke them', async () => {
    const viewer = as(READ);
    expect((await viewer.call('GET', `/subscriptions/${a.id}/portal-links`)).status).toBe(200);
    expect((await viewer.call('POST', `/subscriptions/${a.id}/portal-links`)).status).toBe(403);
    expect((await viewer.call('DELETE', `/subscriptions/${a.id}/portal-links/${link.id}`)).status).toBe(403);
  });

  // Last: it leaves this address's unknown-token bucket empty for a second.
  it('refuses an address cycling unknown portal tokens unread, 401 with Retry-After; its real link opens again', async () => {
    const { burst } = UNKNOWN_PORTAL_TOKENS;
    // Guesses until one is refused unlooked-up. The share refills at one a second, so on a loaded machine, where
    // the guesses take longer, a few more than the burst may be looked up first.
    const guesses = [];
    for (let i = 0; i < burst + 60; i++) {
      const guess = await as(`psp_${randomBytes(32).toString('base64url')}`).call('GET', `/subscriptions/${a.id}`);
      guesses.push(guess);
      if (guess.body?.reason === 'unknown-portal-tokens') break;
    }
    const refused = guesses.pop()!;
    expect(guesses.length).toBeGreaterThanOrEqual(burst);
    expect(guesses.map((g) => [g.status, g.body?.reason])).toEqual(guesses.map(() => [401, undefined]));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ reason: 'unknown-portal-tokens', detail: expect.stringMatching(/Retry in/) });
    // A token of another shape is never looked up, so it is refused as unknown, not as one too many.
    const malformed = await as('psp_x').call('GET', `/subscriptions/${a.id}`);
    expect([malformed.status, malformed.body.reason]).toEqual([401, undefined]);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await as(link.token).call('GET', `/subscriptions/${a.id}`)).status).toBe(200);
  });
});
