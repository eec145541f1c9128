// What the fuzzer aims at, read from the served OpenAPI document: every operation under `paths` (and the
// New Plant webhook under `webhooks`), with its parameters, body schema, the token it needs and the statuses
// it documents. A route added to the document is fuzzed without a change here.

/** The kinds of credential a request carries. */
export const TOKEN_KINDS = ['none', 'wrong', 'webhook', 'adminRead', 'adminWrite'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export type Schema = Record<string, unknown> & {
  type?: string | string[];
  $ref?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
};

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** The path template, `/subscriptions/{id}`. */
  path: string;
  /** `POST /subscriptions/{id}`: how the report names it. */
  route: string;
  parameters: Parameter[];
  body: Schema | null;
  /** The tokens that may call it. */
  accepts: Set<TokenKind>;
  /** An admin token that is valid but lacks the scope: 403 rather than 401. */
  forbids: Set<TokenKind>;
  /** The statuses its responses document. */
  documented: Set<number>;
  isWebhook: boolean;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  webhooks?: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, Schema>; parameters?: Record<string, Parameter> };
  security?: Record<string, string[]>[];
}
interface OpenApiOperation {
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  const add = (path: string, method: string, op: OpenApiOperation, isWebhook: boolean) => {
    const security = op.security ?? doc.security ?? [];
    const { accepts, forbids } = tokensFor(security);
    ops.push({
      method: method.toUpperCase(),
      path,
      route: `${method.toUpperCase()} ${path}`,
      parameters: (op.parameters ?? []).map((p) => resolveParameter(doc, p)),
      body: op.requestBody?.content?.['application/json']?.schema ?? null,
      accepts,
      forbids,
      documented: new Set(
        Object.keys(op.responses)
          .filter((s) => /^\d{3}$/.test(s))
          .map(Number),
      ),
      isWebhook,
    });
  };
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of METHODS) if (item[method]) add(path, method, item[method], false);
  // A webhook is named, not addressed; the interface sends it to POST /plant/webhook.
  for (const [name, item] of Object.entries(doc.webhooks ?? {}))
    for (const method of METHODS)
      if (item[method]) add(name.startsWith('/') ? name : `/${name}`, method, item[method], true);
  return ops;
}

/**
 * `bearerAuth` is the senders' webhook token; `adminAuth` an admin token, with the scope the operation lists.
 * The read API over the store takes either.
 */
function tokensFor(security: Record<string, string[]>[]) {
  const accepts = new Set<TokenKind>();
  const forbids = new Set<TokenKind>();
  if (security.length === 0)
    for (const t of ['none', 'wrong', 'webhook', 'adminRead', 'adminWrite'] as const) accepts.add(t);
  for (const requirement of security) {
    for (const [scheme, scopes] of Object.entries(requirement)) {
      if (scheme === 'bearerAuth') accepts.add('webhook');
      if (scheme === 'adminAuth') {
        accepts.add('adminWrite');
        if (scopes.length === 0 || scopes.includes('read')) accepts.add('adminRead');
        else forbids.add('adminRead');
      }
    }
  }
  for (const t of accepts) forbids.delete(t);
  return { accepts, forbids };
}

function resolveParameter(doc: OpenApiDocument, p: Parameter | { $ref: string }): Parameter {
  if ('$ref' in p) return doc.components.parameters![p.$ref.split('/').pop()!];
  return p;
}

/** A schema with its `$ref` followed (one level at a time, as the generator walks it). */
export function resolve(doc: { components: { schemas: Record<string, Schema> } }, schema: Schema): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) s = doc.components.schemas[s.$ref.split('/').pop()!] ?? {};
  return s;
}

/** The operation a concrete path and method reach, if any (a template's `{x}` matches one segment). */
export function matchOperation(ops: Operation[], method: string, path: string): Operation | undefined {
  const segments = path.split('?')[0].split('/');
  return ops.find((op) => {
    if (op.method !== method) return false;
    const t = op.path.split('/');
    return t.length === segments.length && t.every((s, i) => s.startsWith('{') || s === segments[i]);
  });
}

export type { OpenApiDocument };
