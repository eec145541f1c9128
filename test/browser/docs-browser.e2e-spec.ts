import { Browser } from 'playwright-core';
import * as e2e from '../../tools/harness/stack';
import { launchBrowser } from '../../tools/harness/browser';

// /docs as a person uses it, in a real Chromium: loaded from whatever host and port the gateway runs on
// (here 127.0.0.1 and a random port, not the seed's localhost:3000), Authorize, Try it out, Execute, 200.

describe('/docs in a browser', () => {
  let gateway: e2e.RunningGateway;
  let browser: Browser;

  beforeAll(async () => {
    gateway = await e2e.startGateway(e2e.baseEnv());
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('"Try it out" calls the gateway the page was loaded from, and gets a 200', async () => {
    const page = await browser.newPage();
    // The page runs under its Content-Security-Policy: anything it blocks would show up here.
    const violations: string[] = [];
    page.on('console', (m) => /Content Security Policy/i.test(m.text()) && violations.push(m.text()));
    const origin = new URL(gateway.url).host;
    expect(origin).not.toBe('localhost:3000');
    const res = await page.goto(`${gateway.url}/docs`);
    expect(res!.headers()['content-security-policy']).toMatch(/script-src 'self';.*frame-ancestors 'none'/);
    expect(res!.headers()['x-frame-options']).toBe('DENY');
    expect(res!.headers()['x-content-type-options']).toBe('nosniff');
    await page.click('button.authorize');
    await page.fill('.modal-ux .auth-container input', e2e.WEBHOOK_TOKEN);
    await page.click('.modal-ux .auth-btn-wrapper button.authorize');
    await page.click('.modal-ux button.btn-done');
    await page.click('#operations-Plants-listPlants button.opblock-summary-control');
    await page.click('#operations-Plants-listPlants button.try-out__btn');
    await page.click('#operations-Plants-listPlants button.execute');
    const status = page
      .locator('#operations-Plants-listPlants .live-responses-table tbody .response-col_status')
      .first();
    await status.waitFor({ timeout: 15000 });
    expect((await status.innerText()).trim()).toBe('200');
    const requestUrl = await page.locator('#operations-Plants-listPlants .request-url pre').innerText();
    expect(requestUrl).toBe(`http://${origin}/plants?limit=50`);
    expect(violations).toEqual([]);
    await page.screenshot({ path: 'test/output/docs-try-it-out.png', fullPage: false });
  });

  it('refuses to be framed by another page (frame-ancestors, X-Frame-Options)', async () => {
    const page = await browser.newPage();
    // A page of another origin (about:blank with content) framing /docs: the browser must refuse to render it.
    const refused = page.waitForEvent('console', {
      predicate: (m) => /frame-ancestors|X-Frame-Options/i.test(m.text()),
      timeout: 15000,
    });
    await page.setContent(`<iframe src="${gateway.url}/docs"></iframe>`);
    await refused;
    for (const frame of page.frames().slice(1)) expect(await frame.locator('#swagger-ui').count()).toBe(0);
  });

  it("serves /openapi.json with the seed's server untouched, and GET / points a person to the docs", async () => {
    const doc = await (await fetch(`${gateway.url}/openapi.json`)).json();
    expect(doc.servers).toEqual([{ url: 'http://{baseUrl}', variables: { baseUrl: { default: 'localhost:3000' } } }]);
    const res = await fetch(`${gateway.url}/`);
    // The API's own responses are never to be rendered or framed either.
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const index = await res.json();
    expect(index.links.docs.href).toBe('/docs');
    expect(index.links.openapi.href).toBe('/openapi.json');
  });
});
