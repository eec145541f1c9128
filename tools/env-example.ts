#!/usr/bin/env node
// npm run env:example — writes .env.example from the apps' environment schema (libs/config/src/env.schema.ts):
// every variable, which app reads it, its default, and its meaning from the configuration table
// (docs/configuration.md).
// docker compose reads the copy (`cp .env.example .env`): the variables docker-compose.yml interpolates come
// first and uncommented, the required ones empty so that compose refuses to start until they are filled in.
// test/static/env-example.e2e-spec.ts fails when the file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { envReference } from '@app/config';

const root = path.resolve(__dirname, '..');
export const ENV_EXAMPLE = path.join(root, '.env.example');
export const REGENERATE = 'npm run env:example';

/** The configuration table's meaning column, by variable. */
function meanings(): Map<string, string> {
  const table = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
  const rows = table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|(.*)\|\s*$/gm);
  return new Map([...rows].map(([, name, rest]) => [name, rest.split(' | ').slice(2).join(' | ').trim()]));
}

/** `${NAME:?…}` (required) and `${NAME:-default}` in docker-compose.yml: what compose takes from .env. */
function composeVariables(): Map<string, { required: boolean; fallback: string }> {
  const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const found = new Map<string, { required: boolean; fallback: string }>();
  for (const [, name, op, rest] of compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)(:\?|:-)?([^}]*)\}/g))
    found.set(name, { required: op === ':?', fallback: op === ':-' ? rest : '' });
  return found;
}

/** Comment lines of at most 110 characters. */
function wrap(text: string, width = 110): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length + 1 + word.length > width && line !== '#') {
      lines.push(line);
      line = '#  ';
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

export function renderEnvExample(): string {
  const meaning = meanings();
  const compose = composeVariables();
  const entries = envReference();
  const describe = (e: (typeof entries)[number]) =>
    wrap(`${e.name} (${e.app}; ${defaultText(e.name, e.default)}): ${meaning.get(e.name) ?? ''}`);
  const defaultText = (name: string, d: string) =>
    d === 'required'
      ? 'required'
      : compose.get(name)?.required
        ? `required by docker-compose.yml; the apps' default: ${d || 'empty'}`
        : `default: ${d || 'empty'}`;
  const out = [
    `# Generated from libs/config/src/env.schema.ts by \`${REGENERATE}\`: edit the schema or the table in`,
    '# docs/configuration.md, then run it (test/static/env-example.e2e-spec.ts fails while this file is stale).',
    '#',
    '# docker compose: `cp .env.example .env`, then fill in the empty values below. Compose refuses to start',
    '# while one is empty, and the apps refuse any token or key printed in our files. Make them with',
    '#   openssl rand -hex 32        (each token; ADMIN_TOKENS entries are name:scope:token)',
    '#   openssl rand -base64 32     (SECRETS_KEY)',
    '# See docs/deployment-defaults.md.',
    '',
    '# --- Read by docker-compose.yml ---',
  ];
  for (const e of entries.filter((x) => compose.has(x.name))) {
    const c = compose.get(e.name)!;
    out.push(...describe(e), `${e.name}=${c.required ? '' : c.fallback}`, '');
  }
  out.push(
    '# --- Not read by docker-compose.yml (set them in the apps’ environment: npm start, Kubernetes, your own) ---',
    '# The values shown are the defaults.',
  );
  for (const e of entries.filter((x) => !compose.has(x.name)))
    out.push(...describe(e), `# ${e.name}=${e.default === 'required' || e.default === 'unset' ? '' : e.default}`, '');
  return `${out.join('\n').trimEnd()}\n`;
}

if (require.main === module) {
  writeFileSync(ENV_EXAMPLE, renderEnvExample());
  console.log(`wrote ${path.relative(process.cwd(), ENV_EXAMPLE)}`);
}
