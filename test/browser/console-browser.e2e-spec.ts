import { randomBytes } from 'node:crypto';
import { Browser, Page } from 'playwright-core';
import { adminClient } from '../../tools/harness/admin';
import { accessibilityViolations, launchBrowser } from '../../tools/harness/browser';
import { Receiver } from '../../tools/harness/receiver';
import { ownDatabase } from '../../tools/harness/own-stack';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// `npm run screenshots` points this at docs/console, where docs/console-and-cli.md shows them.
const SHOTS = process.env.SCREENSHOT_DIR ?? 'test/output';

// The operator console in Debian's Chromium, against the real gateway, worker, Kafka and PostgreSQL: a database of
// its own, so that a dead letter can be caused and then fixed, and topics of its own, so that its unfiltered
// subscription and its newest plants' page see only the plants it posts (it runs beside other suites).
describe('the console in a browser', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  let browser: Browser;
  let page: Page;
  const receiver = new Receiver();
  const cspViolations: string[] = [];
  const nextId = e2e.plantIds();
  const bugged = `Bugged ${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    const own = await ownDatabase('console', { DELIVERY_RETRY_SCHEDULE: '0s,200ms' });
    ({ db } = own);
    await receiver.start();
    const env = own.env;
    worker = await e2e.startWorker(env);
    gw = await e2e.startGateway(env);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
  });

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png` });

  const expectAccessible = async (what: string) =>
    expect(await accessibilityViolations(page, what)).toEqual({ page: what, violations: [] });

  it('refuses a webhook token, signs in with an admin token from the keyboard, and shows the overview', async () => {
    const encodings: string[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/console/assets/')) encodings.push(r.headers()['content-encoding'] ?? 'identity');
    });
    const res = await page.goto(`${gw.url}/console`);
    expect(res!.headers()['content-security-policy']).toMatch(/script-src 'self'/);
    await page.getByLabel('Admin token').waitFor();
    // Its script and styles go compressed (the build's Brotli copies). The load time is printed, not asserted.
    expect(encodings).toEqual(['br', 'br']);
    const load = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const bytes = performance
        .getEntriesByType('resource')
        .reduce((n, r) => n + (r as PerformanceResourceTiming).transferSize, nav.transferSize);
      return { ms: Math.round(nav.loadEventEnd || performance.now()), kB: Math.round(bytes / 1024) };
    });
    process.stdout.write(`console first load: ${load.ms} ms, ${load.kB} kB transferred\n`);
    await page.getByLabel('Admin token').fill(e2e.WEBHOOK_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/not an admin token/);
    await expectAccessible('sign-in');

    await page.getByLabel('Admin token').fill('');
    await page.getByLabel('Admin token').focus();
    await page.keyboard.type(e2e.ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('img', { name: /Last hour per minute/ }).waitFor();
    await expectAccessible('overview');
    // Keyboard only: Tab reaches the navigation.
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Overview');
  });

  let subscriptionId = '';

  it('creates a subscription and shows its secret once', async () => {
    await page.getByRole('link', { name: 'Subscriptions' }).click();
    await page.getByLabel('Receiver URL').fill(`${receiver.url}/console`);
    await page.getByLabel('Description').fill('from the console');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const secret = await page.getByTestId('secret').innerText();
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByText('you will not see it again').count()).resolves.toBe(1);
    await expectAccessible('subscriptions');
    await shot('subscriptions');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.reload();
    await page.getByRole('heading', { name: 'Subscriptions' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const subs = (await adminClient(gw.url).call('GET', '/subscriptions')).body as { id: string; url: string }[];
    subscriptionId = subs.find((s) => s.url === `${receiver.url}/console`)!.id;
  });

  it('edits the subscription, and sends it a test New Plant showing what was sent and what came back', async () => {
    const admin = adminClient(gw.url);
    await page.getByRole('link', { name: `${receiver.url}/console`, exact: true }).click();
    await page.getByRole('heading', { name: /Subscription to/ }).waitFor();
    await page.getByLabel('Description').fill('edited from the console');
    await page.getByLabel('Only these tags (comma-separated)').fill('fern, palm');
    await page.getByLabel('Plant ids from').fill('1');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await admin.call('GET', `/subscriptions/${subscriptionId}`)).body).toMatchObject({
      description: 'edited from the console',
      filter: { tags: ['fern', 'palm'], plantIds: { min: 1 } },
    });
    // A range that can never match is refused by the API, and the page says why.
    await page.getByLabel('Plant ids to').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/filter\.plantIds.*no plant would ever match/);
    // Back to every plant, for the tests that follow.
    await page.getByLabel('Only these tags (comma-separated)').fill('');
    await page.getByLabel('Plant ids from').fill('');
    await page.getByLabel('Plant ids to').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await admin.call('GET', `/subscriptions/${subscriptionId}`)).body.filter).toEqual({});

    receiver.behave('/console', () => ({ status: 204 }));
    await page.getByRole('button', { name: 'Send a test New Plant' }).click();
    await page.getByRole('status').filter({ hasText: 'Test sent: HTTP 204' }).waitFor();
    const sent = page.getByRole('region', { name: 'Request sent' });
    await expect(sent.innerText()).resolves.toMatch(/webhook-signature: v1,/);
    const [got] = receiver.received.filter((r) => r.path === '/console');
    expect(got.headers['webhook-id']).toMatch(/^msg_test_/);
    await expect(sent.innerText()).resolves.toContain(got.headers['webhook-signature'] as string);
    await expectAccessible('subscription');
    await shot('subscription');
  });

  it('shows failed deliveries with what was sent, retries one from its page and the rest in bulk, and filters by time', async () => {
    let healthy = false;
    receiver.behave('/console', () => ({ status: healthy ? 204 : 500 }));
    const [first, second] = [nextId(), nextId()];
    for (const [id, name] of [
      [first, 'Console fern'],
      [second, 'Console palm'],
    ] as const)
      expect((await e2e.postPlant(gw.url, { id, name })).status).toBe(200);
    await waitFor('both deliveries failed for good', async () => {
      const d = await adminClient(gw.url).deliveriesOf(subscriptionId);
      return d.length === 2 && d.every((x) => x.status === 'failed');
    });
    await page.goto(`${gw.url}/console/deliveries?subscriptionId=${subscriptionId}`);
    await page.getByRole('cell', { name: 'failed' }).first().waitFor();
    await expectAccessible('deliveries');
    await shot('deliveries');
    await page
      .getByRole('row', { name: new RegExp(`\\b${first}\\b`) })
      .getByRole('link')
      .first()
      .click();
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();
    await expect(page.getByRole('cell', { name: '500', exact: true }).count()).resolves.toBe(2);
    // What was sent: the exact body and the signed headers.
    const sent = page.getByRole('region', { name: 'Request sent' });
    await expect(sent.innerText()).resolves.toMatch(/webhook-signature: v1,/);
    await expect(sent.innerText()).resolves.toMatch(/"name": ?"Console fern"/);
    healthy = true;
    await page.getByRole('button', { name: 'Retry now' }).click();
    await waitFor('the retry delivered', () => receiver.on('/console', first).length === 3);
    await waitFor('the page shows it succeeded', async () => {
      await page.reload();
      return (await page.getByText('succeeded').count()) > 0;
    });
    await expectAccessible('delivery');
    await shot('delivery');

    // The other one, with every failed delivery of the subscription.
    await page.goto(`${gw.url}/console/deliveries?subscriptionId=${subscriptionId}&status=failed`);
    await page.getByRole('cell', { name: 'failed' }).waitFor();
    await page.getByRole('button', { name: 'Retry every failed delivery in this filter' }).click();
    await page.getByRole('status').filter({ hasText: '1 failed deliveries sent again.' }).waitFor();
    await waitFor('the bulk retry delivered', () => receiver.on('/console', second).length === 3);

    // A time range after them: nothing matches.
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByLabel('Subscription id').fill(subscriptionId);
    await page.getByLabel('Created from').fill('2099-01-01T00:00');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByText('No delivery matches.').waitFor();
    expect(page.url()).toContain('since=2099-01-01');
  });

  it('lists the newest plants, looks one up, and shows its deliveries', async () => {
    // The fern came first (ids grow); deliveries are listed in the order they were first attempted, which for
    // two plants sent at once need not be the order they came in.
    const id = Math.min(...(await adminClient(gw.url).deliveriesOf(subscriptionId)).map((d) => d.plantId));
    await page.getByRole('link', { name: 'Plants' }).click();
    await page.getByRole('row', { name: new RegExp(`\\b${id}\\b.*Console fern`) }).waitFor();
    await expectAccessible('plants');
    await shot('plants');
    await page.getByLabel('Plant id').fill(String(id));
    await page.getByRole('button', { name: 'Show the plant' }).click();
    await page.getByRole('heading', { name: `Plant ${id}` }).waitFor();
    await page.getByText('Console fern').waitFor();
    await page.getByRole('cell', { name: 'succeeded' }).waitFor();
    await expectAccessible('plant');
    expect(page.url()).toMatch(new RegExp(`/console/plants/${id}$`));
  });

  it('shows the overview with what flowed, the consumer lag and the last hour', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    const lag = page.locator('.card', { hasText: 'consumer lag' });
    await expect(lag.locator('strong').innerText()).resolves.toMatch(/^[\d,]+$/);
    await page.getByRole('img', { name: /Last hour per minute: Stored [1-9]/ }).waitFor();
    await shot('overview');
  });

  it('redrives a dead letter once its cause is fixed, and the plant is stored', async () => {
    await db.pool.query(`ALTER TABLE plants ADD CONSTRAINT the_bug CHECK (name NOT LIKE '${bugged}%') NOT VALID`);
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: `${bugged} fern` })).status).toBe(200);
    await page.goto(`${gw.url}/console/dead-letters`);
    const row = page.getByRole('row', { name: new RegExp(`\\b${id}\\b`) });
    await waitFor('the dead letter listed', async () => {
      await page.reload();
      return (await row.count()) === 1;
    });
    await expect(row.innerText()).resolves.toMatch(/unstorable/);
    await expectAccessible('dead letters');
    await shot('dead-letters');
    await db.pool.query('ALTER TABLE plants DROP CONSTRAINT the_bug');
    await row.getByRole('button', { name: /^Redrive/ }).click();
    await page.getByRole('status').filter({ hasText: 'redriven' }).waitFor();
    await waitFor('the plant stored', async () =>
      (await db.pool.query('SELECT 1 FROM plants WHERE id = $1', [id])).rowCount === 1 ? true : null,
    );
  });

  it('signs out: the token is gone from the tab, and no CSP violation happened', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    await expect(page.evaluate(() => sessionStorage.length)).resolves.toBe(0);
    await shot('sign-in');
    expect(cspViolations).toEqual([]);
  });
});
