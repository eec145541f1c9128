import { createHash, randomUUID } from 'node:crypto';
import { INEXACT_NUMBER_MESSAGE, inexactNumbers } from './exact-numbers';
import { NewPlant } from './new-plant';
import { fieldName } from './storable-json';
import { acceptedNewPlantSchema, ajv, compiled, FieldError, toFieldErrors } from './schema-registry';

export const PLANT_CREATED = 'plant.created';
export const PLANT_CREATED_TOPIC = 'plant.created';
export const PLANT_CREATED_DLQ_TOPIC = 'plant.created.dlq';

/** Kafka headers every plant.created record carries. */
export const EventHeaders = {
  eventId: 'ce_id',
  type: 'ce_type',
  traceparent: 'traceparent',
} as const;

/** Headers added to a record copied to the dead-letter topic. */
/** On a record redriven from the dead-letter topic by the admin API: where it comes back from. */
export const RedriveHeaders = {
  from: 'x-redriven-from',
  deadLetterId: 'x-dead-letter-id',
} as const;

export const DeadLetterHeaders = {
  reason: 'x-error',
  topic: 'x-origin-topic',
  partition: 'x-origin-partition',
  offset: 'x-origin-offset',
  /** Set when the record was too large to dead-letter whole: its value is cut, its own headers dropped. */
  truncated: 'x-truncated',
  originalBytes: 'x-original-bytes',
  originalSha256: 'x-original-sha256',
} as const;

/**
 * Loop protection across Plant Stores (and anything that forwards their webhooks back): every outgoing New
 * Plant carries how many Plant Store deliveries the data has been through and the id of the event that
 * started it; a gateway receiving them carries them on in the event (CloudEvents extension attributes
 * `hopcount`, `originid`), and the worker stops fanning out past MAX_WEBHOOK_HOPS. A forwarder that keeps
 * these headers lets a loop that changes data die out; one that drops them starts a new chain (and an
 * unchanged plant is never delivered again anyway).
 */
export const LoopHeaders = {
  hops: 'plant-store-hops',
  origin: 'plant-store-origin',
} as const;

/** A CloudEvents 1.0 envelope (structured JSON mode) carrying a NewPlant. */
export interface PlantCreatedEvent {
  specversion: '1.0';
  id: string;
  type: typeof PLANT_CREATED;
  source: string;
  time: string;
  datacontenttype: 'application/json';
  subject: string;
  data: NewPlant;
  /** Plant Store deliveries this data went through before it reached us (0: straight from a sender). */
  hopcount?: number;
  /** The event that started this chain of deliveries (absent: this one). */
  originid?: string;
}

/**
 * JSON Schema of the event on the topic; `data` is NewPlant as the gateway accepts it, so the worker refuses
 * (dead-letters) exactly what the gateway would have refused, and every text it stores (ids, source) is text
 * PostgreSQL holds (`storable`).
 */
export const plantCreatedEventSchema = {
  $id: 'https://plant.store/schemas/plant.created.json',
  type: 'object',
  storable: true,
  required: ['specversion', 'id', 'type', 'source', 'time', 'datacontenttype', 'data'],
  properties: {
    specversion: { const: '1.0' },
    id: { type: 'string', minLength: 1 },
    type: { const: PLANT_CREATED },
    source: { type: 'string', minLength: 1 },
    time: { type: 'string', format: 'date-time' },
    datacontenttype: { const: 'application/json' },
    subject: { type: 'string' },
    data: { $ref: acceptedNewPlantSchema.$id },
    hopcount: { type: 'integer', minimum: 0, maximum: 2_147_483_647 }, // an integer column
    originid: { type: 'string', minLength: 1, maxLength: 128 },
  },
};
ajv.addSchema(plantCreatedEventSchema);
const validateEvent = compiled<PlantCreatedEvent>(plantCreatedEventSchema.$id);

// RFC 4122 name-based (SHA-1, version 5) ids in our own namespace: the same idempotency key always gives the
// same event id, so a sender's retry becomes a duplicate the worker drops.
const NAMESPACE = Buffer.from('6f1c3a52b1e44b0c9d7a2e5f8c3b9a10', 'hex');

export function eventIdFromKey(key: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(key, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function newPlantCreatedEvent(
  plant: NewPlant,
  opts: { source: string; idempotencyKey?: string; now?: Date; hops?: number; origin?: string },
): PlantCreatedEvent {
  return {
    specversion: '1.0',
    id: opts.idempotencyKey ? eventIdFromKey(opts.idempotencyKey) : randomUUID(),
    type: PLANT_CREATED,
    source: opts.source,
    time: (opts.now ?? new Date()).toISOString(),
    datacontenttype: 'application/json',
    subject: String(plant.id),
    data: plant,
    ...(opts.hops ? { hopcount: opts.hops } : {}),
    ...(opts.origin ? { originid: opts.origin } : {}),
  };
}

export type EventParse = { ok: true; event: PlantCreatedEvent } | { ok: false; reason: string; errors?: FieldError[] };

/** Decodes a record's value. Any failure here is permanent: the same bytes will never parse. */
export function parsePlantCreatedEvent(value: Buffer | null): EventParse {
  if (!value || value.length === 0) return { ok: false, reason: 'empty value' };
  const text = value.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `value is not JSON: ${(err as Error).message}` };
  }
  // The gateway refuses a number a double cannot carry exactly; an event from anywhere else is held to the same.
  const inexact = inexactNumbers(text);
  if (inexact.length > 0)
    return {
      ok: false,
      reason: `a number cannot be carried exactly (as a double) at ${inexact.map(fieldName).join(', ')}`,
      errors: inexact.map((path) => ({ field: fieldName(path), message: INEXACT_NUMBER_MESSAGE })),
    };
  if (!validateEvent(json)) {
    const errors = toFieldErrors(validateEvent.errors);
    return {
      ok: false,
      reason: `not a valid plant.created event: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      errors,
    };
  }
  return { ok: true, event: json };
}
