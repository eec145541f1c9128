import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The operator console: a static single-page app the gateway serves at /console (no CDN, no inline script).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0, // every asset a file of its own, allowed by the CSP's 'self'
    modulePreload: { polyfill: false }, // no inline polyfill script
  },
});
