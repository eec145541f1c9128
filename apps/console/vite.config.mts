import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, Plugin } from 'vite';

const outDir = fileURLToPath(new URL('../../dist/console', import.meta.url));

/**
 * Brotli and gzip copies of each script and stylesheet, made once at build time: the gateway serves them
 * (@fastify/static's preCompressed) to browsers that accept them, with no compression work per request.
 */
function precompress(): Plugin {
  return {
    name: 'plant-store-precompress',
    apply: 'build',
    closeBundle() {
      const assets = join(outDir, 'assets');
      for (const name of readdirSync(assets).filter((n) => /\.(js|css)$/.test(n))) {
        const file = join(assets, name);
        const bytes = readFileSync(file);
        writeFileSync(`${file}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

// The operator console: a static single-page app the gateway serves at /console (no CDN, no inline script).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic' } },
  plugins: [precompress()],
  // The API client and its generated types are shared with the CLI (libs/api-client).
  resolve: {
    alias: {
      '@app/api-client': fileURLToPath(new URL('../../libs/api-client/src', import.meta.url)),
      '@app/contracts': fileURLToPath(new URL('../../libs/contracts/src', import.meta.url)),
    },
  },
  build: {
    outDir,
    emptyOutDir: true,
    assetsInlineLimit: 0, // every asset a file of its own, allowed by the CSP's 'self'
    modulePreload: { polyfill: false }, // no inline polyfill script
  },
});
