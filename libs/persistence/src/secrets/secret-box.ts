import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';

// Subscriber credentials (signing secrets, private keys, bearer tokens) are stored sealed: AES-256-GCM from
// Node's crypto (an AEAD: a changed byte fails to open rather than decrypting to garbage), under SECRETS_KEY,
// with the key's id beside each value so keys can be rotated: the current key seals, every configured key opens.
// The subscription's id is bound in as associated data, so a sealed value copied into another row does not open.
//
//   sealed:v1:<key id>:<base64url(12-byte nonce | ciphertext | 16-byte tag)>

const PREFIX = 'sealed:v1:';

export class SecretsKeyError extends Error {}

interface Key {
  id: string;
  bytes: Buffer;
}

/** The key id: the first 8 hex digits of the key's SHA-256, naming a key without revealing it. */
export const keyId = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 8);

/** A key as the configuration holds it (checked there: 32 bytes in base64). */
const parseKey = (base64: string) => Buffer.from(base64, 'base64');

/** Opened values remembered at most; past it the least recently used is opened again when next needed. */
const OPENED_MAX = 10_000;

export class SecretBox {
  private readonly current: Key;
  private readonly byId: Map<string, Key>;
  // Every delivery opens its subscription's secret: ~7 µs of AES-GCM each time, for the same few values. A value
  // that opened once is remembered by its exact sealed text and context; anything altered is a different text,
  // so it still goes through (and fails) the AEAD check.
  private readonly opened = new LRUCache<string, string>({ max: OPENED_MAX });

  /** `current` seals and opens; `previous` only open (during a key rotation). */
  constructor(current: Buffer, previous: Buffer[] = []) {
    this.current = { id: keyId(current), bytes: current };
    this.byId = new Map([this.current, ...previous.map((b) => ({ id: keyId(b), bytes: b }))].map((k) => [k.id, k]));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  /** The id of the key a sealed value needs. */
  static keyIdOf(value: string): string {
    return value.slice(PREFIX.length).split(':')[0];
  }

  seal(plain: string, context: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, nonce);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([nonce, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.current.id}:${body.toString('base64url')}`;
  }

  /** The plain value; throws, naming the key, when no configured key opens it. Never returns garbage. */
  open(sealed: string, context: string): string {
    const memo = `${context}\n${sealed}`;
    const known = this.opened.get(memo);
    if (known !== undefined) return known;
    const plain = this.openOnce(sealed, context);
    this.opened.set(memo, plain);
    return plain;
  }

  private openOnce(sealed: string, context: string): string {
    if (!SecretBox.isSealed(sealed)) throw new SecretsKeyError('a stored credential is not sealed');
    const [id, data] = sealed.slice(PREFIX.length).split(':');
    const key = this.byId.get(id);
    if (!key)
      throw new SecretsKeyError(
        `a stored credential is sealed with key ${id}, which is neither SECRETS_KEY (key ${this.current.id}) ` +
          'nor one of SECRETS_PREVIOUS_KEYS: configure the key it was sealed with',
      );
    const body = Buffer.from(data, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, body.subarray(0, 12));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretsKeyError(`a stored credential does not open with key ${id}: it was altered or moved`);
    }
  }

  /** Opens a nullable column. */
  openOptional(sealed: string | null, context: string): string | null {
    return sealed === null ? null : this.open(sealed, context);
  }
}

/** What both apps seal with, from their configuration. */
export const secretBoxFrom = (c: { SECRETS_KEY: string; SECRETS_PREVIOUS_KEYS: string[] }) =>
  new SecretBox(parseKey(c.SECRETS_KEY), c.SECRETS_PREVIOUS_KEYS.map(parseKey));

/** The associated data binding a sealed value to its subscription. */
export const subscriptionContext = (id: string) => `subscription:${id}`;

/** The associated data binding a sealed header value to its subscription and its header's name. */
export const secretHeaderContext = (id: string, name: string) =>
  `${subscriptionContext(id)}:header:${name.toLowerCase()}`;
