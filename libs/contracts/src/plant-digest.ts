import { createHash } from 'node:crypto';
import { NewPlant } from './new-plant';

/**
 * What identifies a plant's content, whatever the key order: SHA-256 of its canonical JSON. The gateway compares
 * it when an idempotency key comes again; the worker stores it with each event id and compares it when an event
 * id comes again, which catches a key reused with another plant on another gateway replica.
 */
export function plantDigest(plant: NewPlant): string {
  return createHash('sha256').update(canonical(plant)).digest('base64');
}

/** JSON with its keys sorted at every level: the same plant gives the same text in any key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}
