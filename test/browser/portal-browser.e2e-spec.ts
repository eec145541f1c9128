import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminClient } from '../../tools/harness/admin';
import { accessibilityViolations, launchBrowser } from '../../tools/harness/browser';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// `npm run screenshots` points this at docs/console, where docs/console-and-cli.md shows them.
const SHOTS = process.env.SCREENSHOT_DIR ?? 'test/output';

// A subscriber's portal (issue 28, §1) in Debian's Chromium against the real stack, on a database of its own: an
// admin makes a link in the console; the subscriber opens it in another browser (no admin token there) and sees
// its subscription and deliveries alone, from the keyboard; another subscriber's pages are refused by URL and by
// API calls from the page; a revoked or expired link says so.
describe('the subscriber portal in a browser', () => {
  let db: e2e.ScratchDatabase;
  const sharedDatabaseUrl = process.env.DATABASE_URL;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  let browser: Browser;
  const receiver = new Receiver();
  const cspViolations: string[] = [];
  const contexts: BrowserContext[] = [];
  const nextId = e2e.plantIds();
  let healthy = false;
  let a: { id: string };
  let b: { id: string };
  let aDelivery = '';
  let bDelivery = '';
  let admin: Page;
  let subscriber: Page;
  let portalUrl = '';

  /** A browser of its own (own sessionStorage), as the subscriber's would be. */
  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    return page;
  }
  const expectAccessible = async (page: Page, what: string) =>
    expect(await accessibilityViolations(page, what)).toEqual({ page: what, violations: [] });
  /** Tab until the focused element's text is `text` (keyboard only), then Enter. */
  async function tabTo(page: Page, text: string) {
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.textContent?.trim())) === text) {
        await page.keyboard.press('Enter');
        return;
      }
    }
    throw new Error(`Tab never reached "${text}"`);
  }

  beforeAll(async () => {
    db = await e2e.scratchDatabase('portal_browser');
    // The set-up startGateway runs (migrations, sealing) goes to this database too, not the shared one.
    process.env.DATABASE_URL = db.url;
    await receiver.start();
    receiver.behave('/a', () => ({ status: healthy ? 204 : 500 }));
    const env = e2e.baseEnv({ DATABASE_URL: db.url, DELIVERY_RETRY_SCHEDULE: '0s,200ms' });
    worker = await e2e.startWorker(env);
    gw = await e2e.startGateway(env);
    // Only this suite's plants (the topic is shared with other suites).
    const plant = nextId();
    const filter = { plantIds: { min: plant, max: plant + 999 } };
    a = await adminClient(gw.url).subscribe({ url: `${receiver.url}/a`, description: 'subscriber A', filter });
    b = await adminClient(gw.url).subscribe({ url: `${receiver.url}/b`, description: 'subscriber B', filter });
    expect((await e2e.postPlant(gw.url, { id: plant, name: 'Portal palm' })).status).toBe(200);
    [aDelivery, bDelivery] = await Promise.all(
      [a.id, b.id].map((id) =>
        waitFor(`the delivery to ${id} done`, async () => {
          const [d] = await adminClient(gw.url).deliveriesOf(id);
          return d && d.status !== 'pending' ? d.id : null;
        }),
      ),
    );
    browser = await launchBrowser();
    admin = await newPage();
    subscriber = await newPage();
  });

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
    process.env.DATABASE_URL = sharedDatabaseUrl;
  });

  it("lets an admin make a portal link on the subscription's page, shown once", async () => {
    await admin.goto(`${gw.url}/console`);
    await admin.getByLabel('Admin token').fill(e2e.ADMIN_TOKEN);
    await admin.keyboard.press('Enter');
    await admin.getByRole('heading', { name: 'Overview' }).waitFor();
    await admin.goto(`${gw.url}/console/subscriptions/${a.id}`);
    await admin.getByRole('heading', { name: 'Portal links' }).waitFor();
    await admin.getByLabel('Who it is for').fill('Acme ops');
    await admin.getByRole('button', { name: 'Create a portal link' }).click();
    portalUrl = await admin.getByTestId('portal-url').innerText();
    expect(portalUrl).toMatch(new RegExp(`^${gw.url}/console/portal#token=psp_`));
    await admin.getByRole('row', { name: /Acme ops.*active.*never/ }).waitFor();
    await expectAccessible(admin, 'portal links');
    await admin.screenshot({ path: `${SHOTS}/portal-links.png` });
    await admin.getByRole('button', { name: 'I have sent it' }).click();
    await admin.reload();
    await admin.getByRole('row', { name: /Acme ops/ }).waitFor();
    expect(await admin.content()).not.toContain(portalUrl.split('#token=')[1]);
  });

  it("opens the subscriber's portal: its subscription and deliveries, from the keyboard, and nothing else", async () => {
    await subscriber.goto(portalUrl);
    await subscriber.getByRole('heading', { name: `Subscription to ${receiver.url}/a` }).waitFor();
    // The token left the address bar (and the history) at once; the tab keeps it.
    expect(subscriber.url()).toBe(`${gw.url}/console/portal`);
    await expect(subscriber.evaluate(() => sessionStorage.getItem('plant-store-admin-token'))).resolves.toBeNull();
    // Only its own pages are linked: no plants, no dead letters, no other subscription, no filter to widen.
    await expect(subscriber.getByRole('navigation').getByRole('link').allInnerTexts()).resolves.toEqual([
      'Subscription',
      'Deliveries',
    ]);
    await expect(subscriber.getByLabel('Only these tags (comma-separated)').count()).resolves.toBe(0);
    await expect(subscriber.getByRole('heading', { name: 'Portal links' }).count()).resolves.toBe(0);
    await expectAccessible(subscriber, 'portal: subscription');
    await subscriber.screenshot({ path: `${SHOTS}/portal.png` });

    // Keyboard only: to its deliveries, into the failed one, and retry it once the receiver is fixed.
    await tabTo(subscriber, 'Deliveries');
    await subscriber.getByRole('cell', { name: 'failed' }).waitFor();
    await expect(subscriber.getByLabel('Subscription id').count()).resolves.toBe(0);
    await expectAccessible(subscriber, 'portal: deliveries');
    await tabTo(subscriber, aDelivery.slice(0, 8));
    await subscriber.getByRole('heading', { name: 'Attempts' }).waitFor();
    await expect(subscriber.getByRole('cell', { name: '500', exact: true }).count()).resolves.toBe(2);
    await expect(subscriber.getByRole('region', { name: 'Request sent' }).innerText()).resolves.toMatch(
      /webhook-signature: v1,[\s\S]*Portal palm/,
    );
    await expectAccessible(subscriber, 'portal: delivery');
    await subscriber.screenshot({ path: `${SHOTS}/portal-delivery.png` });
    healthy = true;
    await tabTo(subscriber, 'Retry now');
    await waitFor(
      'the retry delivered',
      async () => (await adminClient(gw.url).deliveriesOf(a.id))[0].status === 'succeeded',
    );

    // Its subscription, from the keyboard too: a test send, answered.
    await tabTo(subscriber, 'Subscription');
    await tabTo(subscriber, 'Send a test New Plant');
    await subscriber.getByRole('status').filter({ hasText: 'Test sent: HTTP 204' }).waitFor();

    // Replay everything since an hour ago: the delivery that succeeded on its retry goes once more.
    const replay = subscriber.getByRole('form', { name: 'Replay deliveries' });
    const hourAgo = new Date(Date.now() - 3_600_000 - new Date().getTimezoneOffset() * 60_000);
    await replay.getByLabel('Since', { exact: true }).fill(hourAgo.toISOString().slice(0, 16));
    await replay.getByLabel('Which').selectOption('all');
    await replay.getByRole('button', { name: 'Replay' }).click();
    await subscriber.getByRole('status').filter({ hasText: '1 deliveries re-queued' }).waitFor();
  });

  it("cannot load another subscriber's pages, by URL or by an API call from the page", async () => {
    await subscriber.goto(`${gw.url}/console/portal/deliveries?subscriptionId=${b.id}`);
    await expect(subscriber.getByRole('alert').innerText()).resolves.toMatch(
      new RegExp(`portal link is for subscription ${a.id}: subscription ${b.id} is another subscriber's`),
    );
    await subscriber.goto(`${gw.url}/console/portal/deliveries/${bDelivery}`);
    await expect(subscriber.getByRole('alert').innerText()).resolves.toMatch(
      new RegExp(`delivery ${bDelivery} belongs to another subscriber`),
    );
    await expect(subscriber.getByText('Portal palm').count()).resolves.toBe(0);
    await expectAccessible(subscriber, 'portal: refused');
    const statuses = await subscriber.evaluate(
      async ({ b, bDelivery }) => {
        const auth = { authorization: `Bearer ${sessionStorage.getItem('plant-store-portal-token')}` };
        const status = async (path: string, method = 'GET') => (await fetch(path, { method, headers: auth })).status;
        return {
          subscription: await status(`/subscriptions/${b}`),
          delivery: await status(`/deliveries/${bDelivery}`),
          list: await status('/subscriptions'),
          plants: await status('/plants'),
          deadLetters: await status('/dead-letters'),
          audit: await status('/audit'),
          rotate: await status(`/subscriptions/${b}/rotate-secret`, 'POST'),
        };
      },
      { b: b.id, bDelivery },
    );
    expect(statuses).toEqual({
      subscription: 403,
      delivery: 403,
      list: 403,
      plants: 403,
      deadLetters: 403,
      audit: 403,
      rotate: 403,
    });
  });

  it('refuses a revoked link and an expired one with a message that says so', async () => {
    await admin.getByRole('button', { name: 'Revoke the link for Acme ops' }).click();
    await admin.getByRole('row', { name: /Acme ops.*revoked by/ }).waitFor();
    await subscriber.goto(`${gw.url}/console/portal`);
    await expect(subscriber.getByRole('alert').innerText()).resolves.toMatch(
      /This portal link was revoked on .*Ask the Plant Store operator/,
    );
    await expectAccessible(subscriber, 'portal: revoked');
    await subscriber.screenshot({ path: `${SHOTS}/portal-revoked.png` });

    const expiring = (
      await adminClient(gw.url).call('POST', `/subscriptions/${a.id}/portal-links`, { lifetimeSeconds: 60 })
    ).body as { id: string; url: string };
    await db.pool.query("UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE id = $1", [
      expiring.id,
    ]);
    const late = await newPage();
    await late.goto(expiring.url);
    await expect(late.getByRole('alert').innerText()).resolves.toMatch(
      /This portal link expired on .*Ask the Plant Store operator/,
    );
    const bare = await newPage();
    await bare.goto(`${gw.url}/console/portal`);
    await expect(bare.getByRole('alert').innerText()).resolves.toMatch(/open the whole link you were sent/);
    expect(cspViolations).toEqual([]);
  });
});
