import { readFileSync } from 'node:fs';
import { Browser, chromium, Page } from 'playwright-core';

// Debian's Chromium (tools/test.js installs it), driven by playwright-core, with the flags that keep it from
// reaching for outside hosts at start (there are none here).
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  return chromium.launch({ executablePath, args: ARGS });
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core in the page (evaluated over the DevTools protocol, which the page's CSP does not govern): the serious and
 * critical violations, named with the page, so that a test expecting none says where.
 */
export async function accessibilityViolations(
  page: Page,
  what: string,
): Promise<{ page: string; violations: string[] }> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } })
      .axe;
    const r = await axe.run();
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
  });
  return { page: what, violations };
}
