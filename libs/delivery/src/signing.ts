import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A Standard Webhooks symmetric secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function isValidSecret(secret: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) return false;
  const bytes = Buffer.from(secret.slice(6), 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks headers for one attempt. During a secret rotation both secrets sign and both
 * signatures are sent, space-separated, so receivers can switch secrets at their own pace.
 */
export function signDelivery(secrets: string[], messageId: string, body: string, at: Date): SignedHeaders {
  const signatures = secrets.map((s) => new Webhook(s).sign(messageId, at, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
