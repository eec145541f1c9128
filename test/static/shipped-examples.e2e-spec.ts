import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { knownExampleReason } from '@app/config';

// Every credential printed in what we ship (compose, .env.example, the Kubernetes manifests, the README and docs,
// the CLI and the examples) is public, and someone will deploy it as it stands. Each one must be refused at
// start-up (libs/config/src/known-examples.ts) or be a placeholder that cannot be used as a value (…, <…>, ${…}).
const root = path.resolve(__dirname, '../..');
const SHIPPED = [
  'README.md',
  'docs',
  'docker-compose.yml',
  'Dockerfile',
  '.env.example',
  'deploy',
  'cli',
  'tools/examples',
];
const TEXT = /\.(md|ya?ml|js|ts|example|txt)$|Dockerfile$|docker-compose\.yml$/;

const filesUnder = (p: string): string[] =>
  !existsSync(p)
    ? []
    : statSync(p).isDirectory()
      ? readdirSync(p).flatMap((f) => filesUnder(path.join(p, f)))
      : TEXT.test(p)
        ? [p]
        : [];

const NAMES =
  'WEBHOOK_TOKENS|ADMIN_TOKENS|SECRETS_KEY|SECRETS_PREVIOUS_KEYS|PLANT_STORE_ADMIN_TOKEN|PLANT_STORE_WEBHOOK_TOKEN';
/** NAME=value, NAME: value, --admin-token value, Bearer value: the value as written (quotes dropped). */
const ASSIGNMENTS = new RegExp(
  `(?:(?<![{\\w])(?:${NAMES})["']?\\s*[:=]\\s*|--(?:admin|webhook|subscriber)-token[= ]|\\bBearer\\s+)["']?([^\\s"'\`]+)`,
  'g',
);
/** Written to be replaced, not used: interpolation (${…}, $(…), $VAR), an ellipsis, <angle brackets>. */
const placeholder = (raw: string) => /^[$<{]|…|\.\.\./.test(raw);

/** The credentials in a value: comma-separated entries (name:scope:token for ADMIN_TOKENS) that could be one. */
const credentialsIn = (raw: string) =>
  placeholder(raw)
    ? []
    : raw
        .split(',')
        .map((entry) =>
          entry
            .split(':')
            .pop()!
            .replace(/[;.)}\]]+$/, ''),
        )
        .filter((v) => v.length >= 16 && /^[\w.~+/=-]+$/.test(v)); // the apps take no shorter token

/** Every credential value printed in the files we ship, with where. */
function printedCredentials(): { where: string; value: string }[] {
  const found: { where: string; value: string }[] = [];
  for (const file of SHIPPED.flatMap((p) => filesUnder(path.join(root, p)))) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const [, raw] of line.matchAll(ASSIGNMENTS))
          for (const value of credentialsIn(raw)) found.push({ where: `${path.relative(root, file)}:${i + 1}`, value });
      });
  }
  return found;
}

describe('credentials printed in what we ship', () => {
  it('finds the ones it is meant to find', () => {
    // The scanner itself: a line of each form it must catch.
    const catches = (line: string) => [...line.matchAll(ASSIGNMENTS)].flatMap(([, raw]) => credentialsIn(raw));
    expect(catches('WEBHOOK_TOKENS: ${WEBHOOK_TOKENS:-change-me-webhook-token-0001}')).toEqual([]); // see below
    expect(catches('  ADMIN_TOKENS: ops:write:abcdefabcdefabcdef1,ro:read:0123456789abcdef0')).toEqual([
      'abcdefabcdefabcdef1',
      '0123456789abcdef0',
    ]);
    expect(catches('export SECRETS_KEY="c29tZS1rZXktMzItYnl0ZXMtbG9uZy0wMDAwMDAwMDA="')).toHaveLength(1);
    expect(catches('curl -H "Authorization: Bearer abcdefabcdefabcdef1" …')).toEqual(['abcdefabcdefabcdef1']);
    expect(catches('npx plant-store --admin-token abcdefabcdefabcdef1 subscriptions list')).toHaveLength(1);
    expect(catches('TOKEN=… ; -H "Authorization: Bearer $TOKEN"; --from-literal=WEBHOOK_TOKENS=…')).toEqual([]);
  });

  it('finds compose fallbacks too (`${NAME:-value}`)', () => {
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const fallbacks = [...compose.matchAll(new RegExp(`\\$\\{(?:${NAMES}):?-([^}]*)\\}`, 'g'))].map((m) => m[1]);
    expect(fallbacks.filter((v) => v && !knownExampleReason(v))).toEqual([]);
  });

  it('refuses every one of them at start-up', () => {
    const found = printedCredentials();
    const usable = found.filter(({ value }) => !knownExampleReason(value)).map(({ where }) => where);
    // A value listed here works as a real credential: make it a placeholder, or add it to known-examples.ts.
    expect(usable).toEqual([]);
    // The example Secret's placeholders are among those found (the scan reaches deploy/).
    expect(found.some(({ where }) => where.startsWith('deploy/k8s/base/secret.example.yaml'))).toBe(true);
  });
});
