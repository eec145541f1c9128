// Request bodies of every shape (valid plants with hostile extra properties, deep nesting, huge numbers, bytes
// that are not UTF-8, bodies over the limit) and every encoding (gzip, deflate, br, unknown, lists, bombs, a
// label that lies about the body).
import zlib from 'node:zlib';
import { plantDigest } from '@app/contracts';
import { Operation, resolve, Schema } from './routes';
import { DATE_TIMES, HOSTILE_NUMBERS, HOSTILE_TEXT, Pools, Rng, UUIDS } from './values';

export interface Body {
  bytes: Buffer;
  /** The plant it carries, parsed as the gateway parses it, when it is one the gateway could accept. */
  plant?: Record<string, unknown>;
  /** `Content-Encoding` sent with it, if any. */
  encoding?: string;
  contentType?: string;
  /** A Content-Encoding the gateway decodes (gzip, x-gzip, deflate, br). */
  decodable: boolean;
  label: string;
}

const DECODABLE = new Set(['gzip', 'x-gzip', 'deflate', 'br']);

/** Subscription URLs of every destination kind, valid and not, with and without credentials. */
const BROKER_URLS = [
  'kafka://127.0.0.1:1/plants',
  'kafka://127.0.0.1:1,127.0.0.1:2/plant.created',
  'kafka://user:pass@127.0.0.1:1/',
  'amqp://guest:guest@127.0.0.1:1/?exchange=plants&routingKey=new',
  'amqps://127.0.0.1:1/%2F',
  'nats://127.0.0.1:1/plants.new',
  'nats://127.0.0.1:1/plants.>',
  'mqtt://127.0.0.1:1/plants/new',
  'mqtts://127.0.0.1:1/plants/#',
  'redis://127.0.0.1:1/plants?db=3',
  'rediss://:secret@127.0.0.1:1/plants?db=99',
  'sqs+http://key:secret@127.0.0.1:1/000000000000/plants?region=us-east-1',
  'sqs://key@sqs.eu-west-1.amazonaws.com/123456789012/plants.fifo',
  'sqs+http://127.0.0.1:1/000000000000/q',
];

/** A New Plant body, or something posing as one. */
export function plantBody(rng: Rng, pools: Pools, limit: number, plantId: () => number): Body {
  const shape = rng.weighted<string>([
    [60, 'plant'],
    [8, 'deep'],
    [6, 'literal'],
    [5, 'bytes'],
    [4, 'huge'],
    [4, 'duplicate-keys'],
    [4, 'number-text'],
    [4, 'bom'],
    [3, 'utf16'],
    [2, 'empty'],
  ]);
  let text: string | Buffer;
  switch (shape) {
    case 'plant':
      text = JSON.stringify(plantObject(rng, pools, plantId));
      break;
    case 'deep':
      text = nested(rng.pick([2, 30, 31, 32, 33, 64, 1000, 20000]), rng.chance(0.5), plantId());
      break;
    case 'literal':
      text = rng.pick([
        'null',
        '[]',
        '{}',
        '"plant"',
        '123',
        'true',
        '{"id":1,"name":"a"',
        '{"id":1,"name":"a"}x',
        '{,}',
        "{'id':1}",
        '{"id":1,"name":"a",}',
      ]);
      break;
    case 'bytes':
      text = Buffer.from(Array.from({ length: rng.between(1, 200) }, () => rng.int(256)));
      break;
    case 'huge': {
      const size = rng.pick([limit - 100, limit, limit + 1, limit * 2, limit * 16]);
      text = JSON.stringify({ id: plantId(), name: 'n', pad: 'x'.repeat(Math.max(0, size - 40)) });
      break;
    }
    case 'duplicate-keys':
      text = `{"id":${plantId()},"name":"a","name":"b","id":${plantId()}}`;
      break;
    case 'number-text':
      text = `{"id":${rng.pick(HOSTILE_NUMBERS)},"name":"n","extra":${rng.pick(HOSTILE_NUMBERS)}}`;
      break;
    case 'bom':
      text = `\ufeff${JSON.stringify({ id: plantId(), name: 'bom' })}`;
      break;
    case 'utf16':
      text = Buffer.from(JSON.stringify({ id: plantId(), name: 'utf16' }), 'utf16le');
      break;
    default:
      text = '';
  }
  const raw = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return encode(rng, raw, shape === 'plant' || shape === 'duplicate-keys' || shape === 'number-text' ? raw : null);
}

function plantObject(rng: Rng, pools: Pools, plantId: () => number): Record<string, unknown> {
  const text = () =>
    rng.weighted<() => string>([
      [5, () => `plant ${rng.int(1e6)}`],
      [3, () => rng.pick(pools.strings)],
      [2, () => rng.pick(pools.unicode)],
      [2, () => rng.pick(HOSTILE_TEXT)],
    ])();
  const plant: Record<string, unknown> = {};
  if (rng.chance(0.97))
    plant.id = rng.chance(0.9) ? plantId() : rng.pick<unknown>([0, -1, 1.5, '1', null, 2 ** 53, -(2 ** 53), 1e300]);
  if (rng.chance(0.97)) plant.name = rng.chance(0.95) ? text() : rng.pick<unknown>([null, 1, [], {}]);
  if (rng.chance(0.5)) plant.tag = rng.chance(0.95) ? text() : rng.pick<unknown>([null, 1, ['a']]);
  // Other properties are kept and stored: their names and values are where hostile text hides best.
  const extras = rng.weighted([
    [5, 0],
    [3, 1],
    [2, 4],
  ]);
  for (let i = 0; i < extras; i++) {
    const key = rng.weighted<() => string>([
      [4, () => `x${rng.int(1000)}`],
      [2, () => rng.pick(pools.strings)],
      [2, () => rng.pick(pools.unicode)],
      [2, () => rng.pick(HOSTILE_TEXT)],
      [1, () => rng.pick(['__proto__', 'constructor', 'prototype', 'createdAt', 'lastEventId'])],
    ])();
    plant[key] = rng.weighted<() => unknown>([
      [4, () => rng.pick(pools.json)],
      [2, () => rng.pick(HOSTILE_TEXT)],
      [1, () => ({ nested: rng.pick(HOSTILE_TEXT), list: [rng.pick(HOSTILE_TEXT)] })],
      [1, () => rng.pick([1e308, -0, Number.MAX_SAFE_INTEGER, 0.1])],
    ])();
  }
  return plant;
}

function nested(depth: number, arrays: boolean, id: number): string {
  const open = arrays ? '[' : '{"a":';
  const close = arrays ? ']' : '}';
  return `{"id":${id},"name":"deep","x":${open.repeat(depth)}1${close.repeat(depth)}}`;
}

/** Compresses (or mislabels) the body; `plainJson`: the body's JSON when it could be a plant, to digest it. */
function encode(rng: Rng, raw: Buffer, plainJson: Buffer | null): Body {
  const how = rng.weighted<string>([
    [70, 'none'],
    [3, 'identity'],
    [5, 'gzip'],
    [4, 'deflate'],
    [4, 'br'],
    [1, 'x-gzip'],
    [2, 'GZIP'],
    [2, 'unknown'],
    [2, 'list'],
    [2, 'mislabelled'],
    [2, 'truncated'],
    [2, 'bomb'],
    [1, 'double'],
  ]);
  const plant = plainJson ? parsePlant(plainJson) : undefined;
  const out = (bytes: Buffer, encoding: string | undefined, keepsPlant: boolean): Body => ({
    bytes,
    encoding,
    plant: keepsPlant ? plant : undefined,
    decodable: encoding !== undefined && DECODABLE.has(encoding.trim().toLowerCase()),
    label: encoding ?? 'none',
  });
  switch (how) {
    case 'none':
      return out(raw, undefined, true);
    case 'identity':
      return out(raw, 'identity', true);
    case 'gzip':
    case 'x-gzip':
      return out(zlib.gzipSync(raw), how, true);
    case 'GZIP':
      return out(zlib.gzipSync(raw), 'GZIP', true);
    case 'deflate':
      return out(zlib.deflateSync(raw), 'deflate', true);
    case 'br':
      return out(zlib.brotliCompressSync(raw), 'br', true);
    case 'unknown':
      return out(raw, rng.pick(['compress', 'zstd', 'lz4', 'snappy', 'x-compress', '*', '', ' ', 'gzip;q=1']), false);
    case 'list':
      return out(
        zlib.gzipSync(zlib.gzipSync(raw)),
        rng.pick(['gzip, gzip', 'gzip,identity', 'identity, gzip', 'deflate, br']),
        false,
      );
    case 'mislabelled':
      return out(raw, rng.pick(['gzip', 'deflate', 'br']), false);
    case 'truncated': {
      const z = zlib.gzipSync(raw);
      return out(z.subarray(0, Math.max(1, z.length - rng.between(1, 8))), 'gzip', false);
    }
    case 'bomb': {
      const kind = rng.pick(['gzip', 'deflate', 'br']);
      return out(bomb(kind, rng.pick([2, 16, 64])), kind, false);
    }
    default:
      return out(zlib.gzipSync(zlib.gzipSync(raw)), 'gzip', false);
  }
}

const bombs = new Map<string, Buffer>();

/** A few KB on the wire, `mb` MB decoded: the decoded-size limit must stop it early. Made once per kind and size. */
function bomb(kind: string, mb: number): Buffer {
  const key = `${kind}-${mb}`;
  let z = bombs.get(key);
  if (!z) {
    const plain = Buffer.concat([Buffer.from('{"id":1,"name":"'), Buffer.alloc(mb * 1024 * 1024, 0x61)]);
    z =
      kind === 'gzip'
        ? zlib.gzipSync(plain)
        : kind === 'deflate'
          ? zlib.deflateSync(plain)
          : zlib.brotliCompressSync(plain);
    bombs.set(key, z);
  }
  return z;
}

/** The body parsed as the gateway parses JSON (JSON.parse), when it is an object: what its digest is taken of. */
function parsePlant(json: Buffer): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(json.toString('utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const digestOf = (plant: Record<string, unknown>) => plantDigest(plant as never);

/** A value for `schema`, mostly valid, sometimes not: the admin API's bodies and parameters. */
export function valueFor(
  rng: Rng,
  pools: Pools,
  doc: { components: { schemas: Record<string, Schema> } },
  schema: Schema,
  hints: { receiverUrl: string; ids: (format: string | undefined, name: string) => string | undefined },
  name = '',
  depth = 0,
): unknown {
  const s = resolve(doc, schema);
  if (rng.chance(0.04) || depth > 6) return rng.pick<unknown>([null, 1, 'x', [], {}, true, rng.pick(pools.json)]);
  if (s.const !== undefined) return s.const;
  if (s.enum) return rng.chance(0.9) ? rng.pick(s.enum) : rng.pick(pools.strings);
  const variants = s.oneOf ?? s.anyOf;
  if (variants) return valueFor(rng, pools, doc, rng.pick(variants), hints, name, depth + 1);
  if (s.allOf) return Object.assign({}, ...s.allOf.map((p) => valueFor(rng, pools, doc, p, hints, name, depth + 1)));
  const types = Array.isArray(s.type) ? s.type : [s.type ?? (s.properties ? 'object' : 'string')];
  const type = rng.pick(types);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, prop] of Object.entries(s.properties ?? {}))
        if ((s.required ?? []).includes(key) ? rng.chance(0.95) : rng.chance(0.5))
          out[key] = valueFor(rng, pools, doc, prop, hints, key, depth + 1);
      if (rng.chance(0.1)) out[rng.pick(pools.strings)] = rng.pick(pools.json);
      return out;
    }
    case 'array':
      return Array.from({ length: rng.pick([0, 1, 2, 5, 300]) }, () =>
        valueFor(rng, pools, doc, s.items ?? {}, hints, name, depth + 1),
      );
    case 'integer':
    case 'number':
      return rng.chance(0.8)
        ? rng.between(
            s.minimum !== undefined ? Math.max(s.minimum, -1e6) : -10,
            s.maximum !== undefined ? Math.min(s.maximum, 1e6) : 1000,
          )
        : rng.pick([0, -1, 2 ** 53, -(2 ** 53), 1.5, 1e300]);
    case 'boolean':
      return rng.chance(0.9) ? rng.chance(0.5) : 'true';
    case 'null':
      return null;
    default:
      return stringFor(rng, pools, s, hints, name);
  }
}

function stringFor(
  rng: Rng,
  pools: Pools,
  s: Schema,
  hints: { receiverUrl: string; ids: (format: string | undefined, name: string) => string | undefined },
  name: string,
): string {
  if (rng.chance(0.15)) return rng.pick([...pools.strings, ...pools.unicode, ...HOSTILE_TEXT]);
  if (s.format === 'uri' || name === 'url')
    return rng.weighted<string>([
      [6, hints.receiverUrl],
      [1, 'http://127.0.0.1:1/closed'],
      [1, 'ftp://example.com/'],
      [1, 'javascript:alert(1)'],
      [1, 'http://[::1]:99999/'],
      [1, `http://127.0.0.1/${'a'.repeat(5000)}`],
      [1, 'http://user:pass@127.0.0.1:1/'],
      // Broker destinations (docs/destinations.md), on a closed port: stored, then each attempt fails.
      [1, rng.pick(BROKER_URLS)],
    ]);
  if (s.format === 'date-time') return rng.pick(DATE_TIMES);
  if (s.format === 'uuid') return hints.ids('uuid', name) ?? rng.pick(UUIDS);
  if (name === 'secret') return rng.pick(['whsec_' + Buffer.alloc(32, 7).toString('base64'), 'whsec_', 'short', '']);
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 40, 200);
  const base = `${name || 's'}-${rng.int(1e6)}`;
  return rng.chance(0.9) ? base.padEnd(min, 'x').slice(0, Math.max(min, max)) : 'x'.repeat(max + 1);
}

/** Whether an operation's requests carry a JSON body by default. */
export const hasBody = (op: Operation) => op.body !== null;
