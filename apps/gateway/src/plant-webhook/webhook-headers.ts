import { LoopHeaders } from '@app/contracts';
import { ProblemException } from '@app/observability';

/**
 * Every request header the New Plant webhook keeps or forwards, bounded: the idempotency key is held in
 * memory (IdempotencyKeys) and hashed into the event id; the loop headers ride in the event to Kafka and the
 * store. A header beyond its bound is refused (400 naming it): silently dropping it would lose the sender's
 * retry safety or loop protection. A `traceparent` beyond its bound is ignored instead, as W3C Trace Context
 * asks of a malformed one: the request starts a trace of its own. (`x-request-id` is bounded where request ids
 * are made: one that is not 1-128 of [A-Za-z0-9_.:-] is replaced, see http-server.)
 */
export const HeaderLimits = {
  /** Stripe allows 255 characters; Standard Webhooks ids (`msg_` + 27) and UUIDs are far shorter. */
  idempotencyKey: /^[\x21-\x7e]{1,255}$/,
  hops: /^\d{1,6}$/,
  origin: /^[\w.:-]{1,128}$/,
  /** Version 00 is 55 characters; later versions may append fields. */
  traceparentLength: 512,
} as const;

export interface WebhookHeaders {
  idempotencyKey?: string;
  traceparent?: string;
  hops?: number;
  origin?: string;
}

export function webhookHeaders(header: (name: string) => string | undefined): WebhookHeaders {
  const key = idempotencyKey(header);
  const hops = header(LoopHeaders.hops);
  const origin = header(LoopHeaders.origin);
  if (hops !== undefined && !HeaderLimits.hops.test(hops))
    throw badHeader(
      LoopHeaders.hops,
      'must be a whole number of at most 6 digits (the deliveries this plant went through); forward it as you received it or drop it',
    );
  if (origin !== undefined && !HeaderLimits.origin.test(origin))
    throw badHeader(
      LoopHeaders.origin,
      'must be an event id (letters, digits, . _ : -, at most 128); forward it as you received it or drop it',
    );
  const traceparent = header('traceparent');
  return {
    ...(key !== undefined ? { idempotencyKey: key } : {}),
    ...(traceparent !== undefined && traceparent.length <= HeaderLimits.traceparentLength ? { traceparent } : {}),
    ...(hops !== undefined ? { hops: Number(hops) } : {}),
    ...(origin !== undefined ? { origin } : {}),
  };
}

/** `webhook-id` (Standard Webhooks), else `Idempotency-Key`; each one sent must be within bounds. */
function idempotencyKey(header: (name: string) => string | undefined): string | undefined {
  let key: string | undefined;
  for (const name of ['idempotency-key', 'webhook-id']) {
    const value = header(name);
    if (value === undefined) continue;
    if (!HeaderLimits.idempotencyKey.test(value))
      throw badHeader(
        name,
        `must be 1 to 255 visible ASCII characters (no spaces), not ${value.length} characters` +
          (/^[\x21-\x7e]*$/.test(value) ? '' : ' with others among them') +
          ': send a short unique id per webhook, such as a UUID, and the same one on each retry',
      );
    key = value;
  }
  return key;
}

const badHeader = (name: string, problem: string) =>
  ProblemException.of('badRequest', `The header ${name} ${problem}`, { header: name } as never);
