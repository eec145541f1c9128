import { Browser, chromium } from 'playwright-core';

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
