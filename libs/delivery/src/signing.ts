import { createHmac, createPrivateKey, generateKeyPairSync, KeyObject, randomBytes, sign } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export type SignatureScheme = 'symmetric' | 'asymmetric';

/** A Standard Webhooks symmetric secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function isValidSecret(secret: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) return false;
  const bytes = Buffer.from(secret.slice(6), 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

/**
 * A Standard Webhooks asymmetric key pair (Ed25519): the secret key `whsk_` + base64 of its 32-byte seed, kept
 * by us (sealed at rest); the public key `whpk_` + base64 of its 32 bytes, given to the subscriber to verify
 * `v1a,` signatures without any shared secret.
 */
export function generateKeyPair(): { secretKey: string; publicKey: string } {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const b64 = (v: string | undefined) => Buffer.from(v!, 'base64url').toString('base64');
  return { secretKey: `whsk_${b64(jwk.d)}`, publicKey: `whpk_${b64(jwk.x)}` };
}

/** The public key of a `whsk_` secret key. */
export function publicKeyOf(secretKey: string): string {
  const jwk = ed25519Key(secretKey).export({ format: 'jwk' });
  return `whpk_${Buffer.from(jwk.x!, 'base64url').toString('base64')}`;
}

/** PKCS #8 for an Ed25519 seed (RFC 8410): this fixed prefix, then the 32 bytes. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function ed25519Key(secretKey: string): KeyObject {
  const seed = Buffer.from(secretKey.slice('whsk_'.length), 'base64');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/**
 * Decoded keys, by secret: a worker signs for the same few hundred subscribers all day, and decoding a key
 * (an Ed25519 one above all) costs more than the signature. At most 10,000, the least recently used decoded again when next needed.
 */
const keys = new LRUCache<string, Buffer | KeyObject>({ max: 10_000 });
function keyOf(secret: string): Buffer | KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    key = secret.startsWith('whsk_') ? ed25519Key(secret) : Buffer.from(secret.slice('whsec_'.length), 'base64');
    keys.set(secret, key);
  }
  return key;
}

/**
 * One Standard Webhooks signature over `id.timestamp.body`: `v1,` HMAC-SHA256 with the decoded `whsec_` secret,
 * `v1a,` Ed25519 for a `whsk_` key. node:crypto, not the standardwebhooks package's pure-JavaScript SHA-256
 * (several times the CPU per delivery); the tests verify with that package and with tweetnacl.
 */
function signOne(secret: string, messageId: string, at: Date, body: string): string {
  const content = `${messageId}.${Math.floor(at.getTime() / 1000)}.${body}`;
  const key = keyOf(secret);
  if (Buffer.isBuffer(key)) return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
  return `v1a,${sign(null, Buffer.from(content), key).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks headers for one attempt. During a secret rotation both secrets (or key pairs) sign and
 * both signatures are sent, space-separated, so receivers can switch at their own pace.
 */
export function signDelivery(secrets: string[], messageId: string, body: string, at: Date): SignedHeaders {
  const signatures = secrets.map((s) => signOne(s, messageId, at, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
