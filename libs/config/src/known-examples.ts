// Credentials that appear in Plant Store's own files (compose, the Kubernetes example Secret, the README, docs)
// are public: a deployment that starts with one is open to anyone who read them. They are refused at start-up.
// test/static/shipped-examples.e2e-spec.ts finds every credential value in the files we ship and fails until each is
// refused here, so a new example cannot slip in unnoticed.

/** How to make a real one, said in every refusal. */
export const GENERATE_TOKEN_HINT = 'generate one with `openssl rand -hex 32`';

/** Values once shipped as examples (tokens, and SECRETS_KEY values in base64). */
export const KNOWN_EXAMPLE_VALUES: ReadonlySet<string> = new Set([
  // docker-compose.yml's former fallbacks
  'change-me-webhook-token-0001',
  'change-me-admin-token-000001',
  // deploy/k8s/base/secret.example.yaml, before its values became placeholders
  'example-webhook-token-replace-me',
  'example-admin-token-replace-me',
  'example-read-token-replace-me',
  'ZXhhbXBsZS1vbmx5LXJlcGxhY2UtbWUtMzItYnl0ZXM=', // "example-only-replace-me-32-bytes"
]);

/** Words that only a placeholder carries: a value someone was told to replace. */
const PLACEHOLDER = /change[-_ ]?me|replace[-_ ]?me|example|placeholder|your[-_ ]?(own[-_ ]?)?(token|key|secret)/i;

/**
 * Why a credential must not be used, or null. A SECRETS_KEY is looked at as text too: an example key is a
 * sentence in base64 (a random one decodes to bytes, not words).
 */
export function knownExampleReason(value: string): string | null {
  if (KNOWN_EXAMPLE_VALUES.has(value)) return 'is an example value published in Plant Store’s own files';
  if (PLACEHOLDER.test(value)) return 'is a placeholder (it says change-me, replace-me or example)';
  const decoded = /^[A-Za-z0-9+/]+=*$/.test(value) ? Buffer.from(value, 'base64').toString('latin1') : '';
  if (PLACEHOLDER.test(decoded)) return 'is a placeholder (in base64, it says change-me, replace-me or example)';
  return null;
}
