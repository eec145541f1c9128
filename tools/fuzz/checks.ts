// What a correct answer is. Each rule names what it guards; a broken one becomes a finding with the request and
// the answer. The rules come from the interface: the served document's statuses, the README's error table
// (statuses any route may answer), RFC 9457 problem details, RFC 6750 tokens, and the project's rule that an
// unauthenticated request costs a 401 and nothing more.
import { FuzzCase } from './generate';
import { Outcome } from './wire';

/** Statuses the README's error table gives every route: refusals decided before a route is reached. */
export const ANY_ROUTE = new Set([400, 401, 404, 405, 408, 413, 415, 431]);
/** The New Plant webhook's own, beside its documented 200 (README: POST /plant/webhook). */
export const WEBHOOK_STATUSES = new Set([409, 422]);
/** A webhook-id longer than this that is accepted was not bounded (Stripe's keys: 255 characters at most). */
export const MAX_ACCEPTED_KEY = 1024;

export interface Finding {
  rule: string;
  detail: string;
}

/** The findings of one answer, alone. Cross-request rules (keys reused, stored) are in the ledger. */
export function check(c: FuzzCase, outcome: Outcome, promptMs: number): Finding[] {
  const out: Finding[] = [];
  const f = (rule: string, detail: string) => out.push({ rule, detail });
  if (outcome.kind === 'timeout') {
    f(c.prompt ? 'slow-refusal' : 'no-answer', `no answer within ${outcome.ms} ms`);
    return out;
  }
  if (outcome.kind === 'closed') {
    if (!c.mayClose) f('closed-without-answer', `the connection closed after ${outcome.ms} ms without an answer`);
    return out;
  }
  const a = outcome.answer;
  const s = a.status;
  if (c.prompt && a.ms > promptMs) f('slow-refusal', `answered ${s} only after ${a.ms} ms`);
  if (s >= 500 && !(c.statuses?.includes(s) ?? false)) f('5xx', `answered ${s}`);
  // A HEAD refused as malformed HTTP gets the refusal's body before the close: the parser could not know it was
  // a HEAD, and nothing follows on that connection.
  if (a.trailing > 0 && !(c.head && a.closes)) f('bytes-after-answer', `${a.trailing} bytes followed the ${s} answer`);
  // A HEAD answer has no body to read, only its Content-Type.
  if (s >= 400 && s < 600) problemShape(a.headers['content-type'], c.head ? null : a.body, s, f);
  if (c.statuses) {
    if (!c.statuses.includes(s)) f('framing-accepted', `answered ${s}; only ${c.statuses.join(' or ')} is correct`);
    return out;
  }
  const op = c.op;
  if (op) {
    const documented = op.documented.has(s) || ANY_ROUTE.has(s) || (op.isWebhook && WEBHOOK_STATUSES.has(s));
    if (!documented && c.method === op.method && s < 500)
      f('undocumented-status', `${s} is not documented for ${op.route}`);
    if (s >= 200 && s < 300 && c.method === op.method) {
      if (!op.accepts.has(c.token)) f('served-without-its-token', `${s} to a request with a ${c.token} token`);
      if (c.tokenInQuery) f('token-in-query-served', `${s} to a request with access_token in its query`);
    }
    if (s === 403 && c.method === op.method && !op.forbids.has(c.token))
      f('wrong-refusal', `403 to a ${c.token} token (only an admin token without the scope gets 403)`);
    if (s === 200 && op.isWebhook) {
      if (!eventIdOf(a.body)) f('webhook-200-without-event-id', `body ${excerpt(a.body)}`);
      if (c.key !== undefined && Buffer.byteLength(c.key) > MAX_ACCEPTED_KEY)
        f(
          'huge-key-accepted',
          `a webhook-id of ${Buffer.byteLength(c.key)} bytes was accepted (bound: ${MAX_ACCEPTED_KEY})`,
        );
    }
    // An unauthenticated request costs a 401 and nothing more: an encoded body is not decoded for it.
    const unauthenticated = (c.token === 'none' || c.token === 'wrong') && !op.accepts.has(c.token);
    if (unauthenticated && c.decodable && decodedFor(s, a.body, c.declaredOverLimit))
      f(
        'decoded-before-auth',
        `answered ${s} (${problemType(a.body)}) to an unauthenticated ${c.note}: the body was decoded before the token was checked`,
      );
  } else if (s >= 200 && s < 300 && c.method !== 'GET' && c.method !== 'HEAD' && c.method !== 'OPTIONS') {
    f('undocumented-route-served', `${s} to ${c.method} on a path the document does not describe`);
  }
  return out;
}

/** RFC 9457: application/problem+json, an object with type, title, and the status of the answer. */
function problemShape(
  type: string | undefined,
  body: Buffer | null,
  status: number,
  f: (rule: string, detail: string) => void,
) {
  if (!/^application\/problem\+json\b/.test(type ?? ''))
    return f('not-problem-json', `${status} with Content-Type ${type ?? 'none'}: ${body ? excerpt(body) : '(HEAD)'}`);
  if (!body) return;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return f('not-problem-json', `${status} with a body that is not JSON: ${excerpt(body)}`);
  }
  if (typeof p.type !== 'string' || typeof p.title !== 'string' || p.status !== status)
    f('not-problem-json', `${status} with a problem lacking type, title or its status: ${excerpt(body)}`);
}

/**
 * Whether the answer shows the body was decoded: the decoded-size 413 of a body that was small on the wire, a
 * 400 saying the data is not what its encoding says or not JSON, a 422 on its content.
 */
function decodedFor(status: number, body: Buffer, declaredOverLimit: boolean): boolean {
  if (status === 413) return !declaredOverLimit;
  if (status === 422) return true;
  if (status !== 400) return false;
  const type = problemType(body);
  const detail = String((parse(body) as { detail?: unknown } | null)?.detail ?? '');
  return /malformed-json|nesting-too-deep/.test(type) || /not valid \S+ data/.test(detail);
}

export const eventIdOf = (body: Buffer): string | null => {
  const v = parse(body) as { eventId?: unknown } | null;
  return typeof v?.eventId === 'string' && v.eventId.length > 0 ? v.eventId : null;
};

const problemType = (body: Buffer) => String((parse(body) as { type?: unknown } | null)?.type ?? '?');

function parse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}

export const excerpt = (body: Buffer, max = 300) => {
  const t = body.toString('utf8');
  return t.length > max ? `${t.slice(0, max)}…` : t;
};
