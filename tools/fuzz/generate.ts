// Turns a seed into requests: for every operation of the served document, its path and query parameters
// (valid, harvested from earlier answers, or hostile), each kind of token, bodies of every shape and encoding,
// and on the webhook the `webhook-id` (ordinary, long, huge, odd, reused) and the loop headers. What each
// request is, and what a correct answer to it must be, travels with it to the checks.
import { Body, digestOf, plantBody, valueFor } from './bodies';
import { RAW_CASES, RawCase } from './raw';
import { matchOperation, OpenApiDocument, Operation, Parameter, resolve, TOKEN_KINDS, TokenKind } from './routes';
import { asText, DATE_TIMES, ODD_VALUES, Pools, Rng, UUIDS, VALID_DATE_TIMES } from './values';

export interface FuzzCase {
  n: number;
  family: 'webhook' | 'api' | 'other' | 'raw';
  /** The report's name for it: the operation's route, or the raw case's name. */
  route: string;
  op?: Operation;
  method: string;
  token: TokenKind;
  parts: Buffer[];
  head: boolean;
  endAfter?: boolean;
  /** Raw cases: the only statuses a correct gateway answers. */
  statuses?: number[];
  /** Raw cases: closing the connection without an answer is correct too (the request never completed). */
  mayClose?: boolean;
  /** Raw cases: the gateway can decide before the body arrives, so it must answer before its request timeout. */
  prompt?: boolean;
  /** The body has a Content-Encoding the gateway decodes. */
  decodable: boolean;
  /** The declared body length is over the limit: a 413 needs no decoding. */
  declaredOverLimit: boolean;
  tokenInQuery: boolean;
  /** The webhook's idempotency key as the gateway sees it, and the digest of the plant it came with. */
  key?: string;
  digest?: string;
  note: string;
}

export interface Context {
  doc: OpenApiDocument;
  ops: Operation[];
  pools: Pools;
  /** Authorization header values of each token kind (null: none sent). */
  authorization: (rng: Rng, kind: TokenKind) => string | null;
  nonce: string;
  limit: number;
  host: string;
  receiverUrl: string;
  /** Ids seen in earlier answers, per resource (`subscriptions`, `deliveries`, …). */
  harvested: Map<string, string[]>;
}

/** A generator of cases; deterministic in its seed (harvested ids aside, which depend on the answers). */
export class CaseGenerator {
  private n = 0;
  private readonly rng: Rng;
  private readonly keyed: {
    key: string;
    parts: Buffer[];
    note: string;
    digest?: string;
    token: TokenKind;
    decodable: boolean;
  }[] = [];
  private nextPlant: number;

  constructor(
    private readonly ctx: Context,
    seed: number,
  ) {
    this.rng = new Rng(seed);
    // Plant ids of this run: far from other suites' (they share the topic) and from earlier runs.
    this.nextPlant = 1 + (seed % 1000) * 1e9 + (Math.floor(Date.now() / 1000) % 1e6) * 1000;
  }

  /** Every raw framing case once, so each run covers them all whatever the seed. */
  catalogue(): FuzzCase[] {
    return RAW_CASES.map((c) => this.raw(c));
  }

  next(): FuzzCase {
    const family = this.rng.weighted<FuzzCase['family']>([
      [45, 'webhook'],
      [45, 'api'],
      [6, 'other'],
      [4, 'raw'],
    ]);
    if (family === 'raw') return this.raw(this.rng.pick(RAW_CASES));
    if (family === 'other') return this.other();
    if (family === 'webhook') return this.webhook();
    return this.api(this.rng.pick(this.ctx.ops.filter((o) => !o.isWebhook)));
  }

  private plantId = () => this.nextPlant++;

  private webhook(): FuzzCase {
    const { rng, ctx } = this;
    const op = this.ctx.ops.find((o) => o.isWebhook)!;
    // A retry of an earlier webhook, byte for byte, or its key with another plant.
    if (this.keyed.length > 0 && rng.chance(0.06)) {
      const earlier = rng.pick(this.keyed);
      if (rng.chance(0.5))
        return {
          ...this.base('webhook', op, earlier.token),
          parts: earlier.parts,
          key: earlier.key,
          digest: earlier.digest,
          decodable: earlier.decodable,
          note: `retry of: ${earlier.note}`,
        };
    }
    const token = rng.weighted<TokenKind>([
      [70, 'webhook'],
      ...TOKEN_KINDS.filter((t) => t !== 'webhook').map((t) => [7.5, t] as const),
    ]);
    const body = plantBody(rng, ctx.pools, ctx.limit, this.plantId);
    const headers: [string, string][] = [];
    const notes = [`body ${body.label}`];
    let key: string | undefined;
    const reuse = this.keyed.length > 0 && rng.chance(0.03) ? rng.pick(this.keyed) : null;
    const keyStyle = reuse
      ? 'reused'
      : rng.weighted<string>([
          [25, 'none'],
          [55, 'plain'],
          [5, 'idempotency-key'],
          [4, 'long'],
          [4, 'huge'],
          [4, 'odd'],
          [3, 'empty'],
        ]);
    const unique = `${ctx.nonce}-${this.n}`;
    switch (keyStyle) {
      case 'reused':
        key = reuse!.key;
        break;
      case 'plain':
        key = `msg_${unique}`;
        break;
      case 'idempotency-key':
        key = `idem-${unique}`;
        break;
      case 'long':
        key = `msg_${unique}_${'k'.repeat(rng.between(100, 1000))}`;
        break;
      case 'huge':
        key = `msg_${unique}_${'K'.repeat(rng.pick([2000, 8000, 15000, 20000]))}`;
        break;
      case 'odd':
        key = rng.pick([
          `${unique} with spaces`,
          `${unique},${unique}`,
          `${unique}\t`,
          `é${unique}ü`,
          `${unique}😀`,
          `"${unique}"`,
          `${unique}/../x`,
        ]);
        break;
      case 'empty':
        key = '';
        break;
    }
    if (key !== undefined) {
      headers.push([keyStyle === 'idempotency-key' ? 'Idempotency-Key' : 'webhook-id', utf8AsLatin1(key)]);
      notes.push(`key ${keyStyle}(${key.length})`);
    }
    if (rng.chance(0.2)) {
      headers.push(...this.loopHeaders());
      notes.push('loop headers');
    }
    if (rng.chance(0.1))
      headers.push([
        'traceparent',
        rng.pick([
          '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          'garbage',
          '00-' + '0'.repeat(32) + '-' + '0'.repeat(16) + '-00',
        ]),
      ]);
    const tokenInQuery = rng.chance(0.02);
    const c = this.build(op, 'POST', op.path + (tokenInQuery ? '?access_token=x' : ''), token, headers, body, notes);
    c.tokenInQuery = tokenInQuery;
    // The gateway treats an empty key as none: only a key it reads is one.
    if (key) {
      c.key = key;
      c.digest = body.plant ? digestOf(body.plant) : undefined;
      const entry = { key, parts: c.parts, note: c.note, digest: c.digest, token, decodable: c.decodable };
      this.keyed.push(entry);
      if (this.keyed.length > 50) this.keyed.shift();
    }
    return c;
  }

  private loopHeaders(): [string, string][] {
    const { rng } = this;
    const out: [string, string][] = [];
    if (rng.chance(0.8))
      out.push([
        'plant-store-hops',
        rng.pick(['0', '1', '5', '100', '999999', '1000000', '-1', '1.5', 'abc', ' 2', '01', '9'.repeat(30)]),
      ]);
    if (rng.chance(0.8))
      out.push([
        'plant-store-origin',
        rng.pick([`evt-${this.n}`, 'a'.repeat(128), 'a'.repeat(129), 'with space', 'é', '../x', '0', 'x'.repeat(5000)]),
      ]);
    if (rng.chance(0.1)) out.push(['plant-store-hops', '3']); // the header twice
    return out;
  }

  private api(op: Operation): FuzzCase {
    const { rng, ctx } = this;
    const method = rng.chance(0.92)
      ? op.method
      : rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE']);
    const notes: string[] = [];
    let path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const p = op.parameters.find((x) => x.in === 'path' && x.name === name);
      return this.pathValue(op, p, name, notes);
    });
    // Half the requests keep every parameter valid: one hostile parameter refuses the request before the
    // others (a leap-second `since`) reach the code that uses them.
    const hostile = rng.chance(0.5);
    const query: string[] = [];
    for (const p of op.parameters.filter((x) => x.in === 'query')) {
      if (!rng.chance(0.5)) continue;
      query.push(`${p.name}=${this.paramValue(op, p, hostile)}`);
      if (hostile && rng.chance(0.05)) query.push(`${p.name}=${this.paramValue(op, p, hostile)}`); // repeated
    }
    if (rng.chance(0.05))
      query.push(`${rng.pick(['unknown', 'limit[]', 'a.b', '__proto__', ''])}=${rng.pick(ODD_VALUES)}`);
    const tokenInQuery = rng.chance(0.02);
    if (tokenInQuery) query.push('access_token=x');
    if (query.length) path += `?${query.join('&')}`;
    // Valid tokens more often than not: a refused token stops a request before the code worth reaching.
    const token = rng.weighted<TokenKind>([
      [15, 'none'],
      [15, 'wrong'],
      [15, 'webhook'],
      [20, 'adminRead'],
      [35, 'adminWrite'],
    ]);
    let body: Body | null = null;
    if (op.body && rng.chance(0.9)) {
      body = rng.chance(0.75)
        ? json(
            valueFor(rng, ctx.pools, ctx.doc, op.body, {
              receiverUrl: ctx.receiverUrl,
              ids: (f, n) => this.harvestedId(op, n, f),
            }),
          )
        : plantBody(rng, ctx.pools, ctx.limit, this.plantId);
    } else if (rng.chance(0.05)) body = plantBody(rng, ctx.pools, ctx.limit, this.plantId);
    // Another method reaches another operation of the path, or none: checked as what it reaches.
    const reached = method === op.method ? op : matchOperation(ctx.ops, method, path);
    const c = this.build(reached, method, path, token, [], body, notes);
    c.tokenInQuery = tokenInQuery;
    if (!reached) c.route = `${method} ${op.path} (not in the document)`;
    return c;
  }

  // Every choice draws the same numbers whether or not an id was harvested yet, so a seed gives the same
  // sequence of cases however the answers interleave.
  private pathValue(op: Operation, p: Parameter | undefined, name: string, notes: string[]): string {
    const { rng } = this;
    const choice = rng.weighted<string>([
      [45, 'valid'],
      [25, 'harvested'],
      [30, 'odd'],
    ]);
    const valid = encodePart(asText(this.schemaValue(p?.schema ?? {}, name)));
    const harvested = this.harvestedId(op, name);
    const odd = rng.pick(ODD_VALUES);
    if (choice === 'harvested' && harvested) return encodePart(harvested);
    if (choice === 'odd') {
      notes.push(`odd ${name}`);
      return odd;
    }
    return valid;
  }

  private paramValue(op: Operation, p: Parameter, hostile: boolean): string {
    const { rng } = this;
    const s = resolve(this.ctx.doc, p.schema);
    const odd = rng.chance(0.3) ? rng.pick(ODD_VALUES) : null;
    const date = rng.pick(hostile ? DATE_TIMES : VALID_DATE_TIMES);
    const harvested = p.name.endsWith('Id') && rng.chance(0.5) ? this.harvestedId(op, p.name) : undefined;
    const valid = asText(this.schemaValue(s, p.name));
    if (hostile && odd !== null) return odd;
    if (s.format === 'date-time' || p.name === 'since' || p.name === 'until') return encodePart(date);
    return encodePart(harvested ?? valid);
  }

  private schemaValue(schema: Record<string, unknown>, name: string): unknown {
    return valueFor(
      this.rng,
      this.ctx.pools,
      this.ctx.doc,
      schema,
      { receiverUrl: this.ctx.receiverUrl, ids: () => undefined },
      name,
    );
  }

  /**
   * An id an earlier answer named, for the resource a parameter refers to. Never for a redrive: that republishes
   * a dead letter to the shared topic, where other suites' workers would read it (fuzzed with unknown ids only).
   */
  private harvestedId(op: Operation, name: string, format?: string): string | undefined {
    if (op.path.includes('redrive')) return undefined;
    const resource =
      name === 'id'
        ? op.path.split('/')[1]
        : name === 'subscriptionId'
          ? 'subscriptions'
          : name === 'plantId'
            ? 'plants'
            : name === 'ids'
              ? op.path.split('/')[1]
              : undefined;
    const i = this.rng.int(2 ** 30);
    const ids = resource ? this.ctx.harvested.get(resource) : undefined;
    if (!ids?.length || format === 'date-time') return undefined;
    return ids[i % ids.length];
  }

  /** Requests to what the document does not describe: the index, docs, console, unknown and odd paths. */
  private other(): FuzzCase {
    const { rng } = this;
    const path = rng.pick([
      '/',
      '/readyz',
      '/healthz',
      '/openapi.json',
      '/openapi.yaml',
      '/docs',
      '/docs/',
      '/console',
      '/console/',
      '/console/../openapi.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/metrics',
      '/plant',
      '/plant/webhook/',
      '/plant/WEBHOOK',
      '/plants/1/2',
      '//plants',
      '/plants;x=1',
      '/%00',
      '/%',
      `/${'a'.repeat(3000)}`,
      '/subscriptions/%2F..%2F',
      '*',
    ]);
    const method = rng.pick(['GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE', 'PUT']);
    const body =
      method === 'POST' || method === 'PUT' ? plantBody(rng, this.ctx.pools, this.ctx.limit, this.plantId) : null;
    const c = this.build(undefined, method, path, rng.pick(TOKEN_KINDS), [], body, []);
    c.family = 'other';
    c.route = 'not in the document';
    return c;
  }

  private raw(rc: RawCase): FuzzCase {
    const built = rc.build({
      host: this.ctx.host,
      webhookAuth: this.ctx.authorization(this.rng, 'webhook')!,
      plant: () => JSON.stringify({ id: this.plantId(), name: `raw ${rc.name}` }),
      limit: this.ctx.limit,
    });
    return {
      ...this.base('raw', undefined, 'webhook'),
      route: `raw: ${rc.name}`,
      method: 'RAW',
      parts: built.parts,
      endAfter: built.endAfter,
      statuses: rc.statuses,
      mayClose: rc.mayClose,
      prompt: rc.prompt,
      note: rc.name,
    };
  }

  private base(family: FuzzCase['family'], op: Operation | undefined, token: TokenKind): FuzzCase {
    return {
      n: this.n++,
      family,
      route: op?.route ?? family,
      op,
      method: op?.method ?? 'GET',
      token,
      parts: [],
      head: false,
      decodable: false,
      declaredOverLimit: false,
      tokenInQuery: false,
      note: '',
    };
  }

  /** The request as bytes: request line, Host, Authorization, the rest, and the body framed by length or in chunks. */
  private build(
    op: Operation | undefined,
    method: string,
    target: string,
    token: TokenKind,
    extra: [string, string][],
    body: Body | null,
    notes: string[],
  ): FuzzCase {
    const { rng, ctx } = this;
    const c = this.base(op ? (op.isWebhook ? 'webhook' : 'api') : 'other', op, token);
    c.method = method;
    c.head = method === 'HEAD';
    const headers: [string, string][] = [['Host', ctx.host]];
    const auth = ctx.authorization(rng, token);
    if (auth !== null) headers.push(['Authorization', auth]);
    headers.push(...extra);
    let payload: Buffer | null = null;
    if (body) {
      payload = body.bytes;
      const type = rng.weighted<string | null>([
        [85, 'application/json'],
        [4, 'application/json; charset=utf-8'],
        [1, 'application/json; charset=latin1'],
        [1, 'APPLICATION/JSON'],
        [2, 'text/plain'],
        [1, 'application/x-www-form-urlencoded'],
        [1, 'multipart/form-data; boundary=x'],
        [1, 'application/problem+json'],
        [1, 'application/jsonx'],
        [1, 'application/json, text/plain'],
        [2, null],
      ]);
      if (type) headers.push(['Content-Type', type]);
      if (body.encoding !== undefined) headers.push(['Content-Encoding', body.encoding]);
      c.decodable = body.decodable;
      if (!notes.includes(`body ${body.label}`)) notes.push(`body ${body.label}`);
      notes.push(`type ${type ?? 'none'}`);
    }
    if (rng.chance(0.02)) headers.push(['Expect', '100-continue']);
    const chunked = payload !== null && rng.chance(0.12);
    if (payload !== null && !chunked) headers.push(['Content-Length', String(payload.length)]);
    if (chunked) headers.push(['Transfer-Encoding', 'chunked']);
    // Chunk-size lines declare the body's length as a Content-Length does, and the gateway refuses a chunked body
    // once its declared chunks pass the limit, before any route (or its token check) runs: framing, not decoding.
    c.declaredOverLimit = payload !== null && payload.length > ctx.limit;
    const head = Buffer.from(
      `${method} ${target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`,
      'latin1',
    );
    c.parts = payload === null ? [head] : chunked ? [head, chunks(rng, payload)] : [Buffer.concat([head, payload])];
    c.note = [`${token} token`, ...notes, chunked ? 'chunked' : ''].filter(Boolean).join(', ');
    return c;
  }
}

/** The body in chunks of random sizes, sometimes with chunk extensions or a trailer. */
function chunks(rng: Rng, payload: Buffer): Buffer {
  const out: Buffer[] = [];
  for (let at = 0; at < payload.length;) {
    const size = Math.min(payload.length - at, rng.pick([1, 7, 100, 1000, 65536]));
    out.push(
      Buffer.from(`${size.toString(16)}${rng.chance(0.05) ? ';ext=1' : ''}\r\n`),
      payload.subarray(at, at + size),
      Buffer.from('\r\n'),
    );
    at += size;
  }
  out.push(Buffer.from(rng.chance(0.05) ? '0\r\nX-Trailer: 1\r\n\r\n' : '0\r\n\r\n'));
  return Buffer.concat(out);
}

function json(value: unknown): Body {
  return { bytes: Buffer.from(JSON.stringify(value) ?? 'null'), decodable: false, label: 'schema json' };
}

/**
 * A path or query value percent-encoded; a lone surrogate (which encodeURIComponent throws on) goes as the
 * bytes Node would write for it, so hostile strings reach the gateway instead of stopping the fuzzer.
 */
function encodePart(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
}

/** A header value as the bytes UTF-8 gives it (HTTP headers are bytes; Node reads them as latin1). */
const utf8AsLatin1 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

export { UUIDS };
