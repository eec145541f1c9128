import { Browser } from 'playwright-core';
import * as e2e from './support/stack';
import { launchBrowser } from './support/browser';

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
    const origin = new URL(gateway.url).host;
    expect(origin).not.toBe('localhost:3000');
    await page.goto(`${gateway.url}/docs`);
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
    await page.screenshot({ path: 'test/output/docs-try-it-out.png', fullPage: false });
  });

  it("serves /openapi.json with the seed's server untouched, and GET / points a person to the docs", async () => {
    const doc = await (await fetch(`${gateway.url}/openapi.json`)).json();
    expect(doc.servers).toEqual([{ url: 'http://{baseUrl}', variables: { baseUrl: { default: 'localhost:3000' } } }]);
    const index = await (await fetch(`${gateway.url}/`)).json();
    expect(index.links.docs.href).toBe('/docs');
    expect(index.links.openapi.href).toBe('/openapi.json');
  });
});
